// Package devserver is the whole app on one machine with no AWS, behind
// `make dev`: the real API handlers, pipeline and campaign services on
// the in-memory stores, a local sign-in and outbox, saved to one file
// (cmd/dev/README.md).
package devserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/limits"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/identity"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/inproc"
	"github.com/unschedule/unschedule/internal/core/pagecursor"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timerspec"
	"github.com/unschedule/unschedule/internal/todo/api"
	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/pipeline"
)

// Config configures a Server. Only DataDir is required.
type Config struct {
	// DataDir is the folder of the saved state (StateFile).
	DataDir string
	// WebDir is the built web app (web/dist). Default: none served.
	WebDir string
	// PublicURL is the server's URL: the links in emails and the allowed
	// CORS origin. Default: "".
	PublicURL string
	// ExtraOrigins are further allowed CORS origins (the Vite dev
	// server's). Default: none.
	ExtraOrigins []string
	// AllowedHosts are further Host header names (no port) the server
	// answers to. Default: only localhost and loopback addresses.
	AllowedHosts []string
	// AllowedEmailDomains is the PreSignUp allow-list. Default: everyone.
	AllowedEmailDomains []string
	// CampaignSenders are the addresses ("ada@example.com") or domains
	// ("@example.com") of the users who may send campaigns. Default: none.
	CampaignSenders []string
	// TokenTTL is how long a sign-in token lives. Default: 12 hours.
	TokenTTL time.Duration
	// Timer is the timer whose in-memory stand-in fires tasks and
	// campaign sends. Default: EventBridge Scheduler.
	Timer timerspec.Name
	// TTLMaxDelay bounds the TTL timer's random delay after a due time
	// (in AWS up to about 48 hours). Default: 1 minute.
	TTLMaxDelay time.Duration
	// CampaignLimits are every sender's abuse limits, counted per UTC
	// day. Default: limits.Defaults().
	CampaignLimits limits.Limits
	// Now is the wall clock. Default: time.Now.
	Now func() time.Time
	// FakeClock, when set, is the server's time instead of Now (browser
	// tests; devclock.go). Default: nil.
	FakeClock *clock.Fake
	// Log receives every log line. Default: slog.Default().
	Log *slog.Logger
}

// localShards is how many local notification topics users are spread over.
const localShards = 2

// Server is the running local app. Use Open, then Handler and Run; Close
// when done.
type Server struct {
	cfg        Config
	log        *slog.Logger
	db         *store
	file       *stateFile
	campTimer  inmem.TimerScheduler // the campaign send schedules' timer
	pipe       *pipeline.Pipeline
	api        *api.Handler
	cursors    *pagecursor.Sealer
	signer     *Signer
	policy     identity.SignUpPolicy
	sns        *localSNS
	subscriber *notify.Subscriber
	reconciler *reconcile.Reconciler
	resets     resetCodes
	verifies   resetCodes // email verification codes (verify.go)
	campaigns  *campaignRuntime
	fake       *fakeTime // Config.FakeClock's driver, or nil

	stepMu    sync.Mutex // one step (pipeline drain and campaign fires) at a time
	persistMu sync.Mutex
	saved     map[string]savedPart // by part name: the last save's encoding
}

// savedPart is a part as last saved, and its version then.
type savedPart struct {
	version uint64
	raw     []byte
}

// wallClock is the API's and the reconciler's clock; it moves the
// pipeline's clock along so every stage reads the same time.
type wallClock struct{ s *Server }

func (c wallClock) Now() time.Time {
	c.s.pipe.Clock.Set(c.s.cfg.Now())
	return c.s.pipe.Clock.Now()
}

// Open locks cfg.DataDir, restores its saved state and wires the app.
func Open(cfg Config) (*Server, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("devserver: a data folder is required")
	}
	if cfg.TokenTTL <= 0 {
		cfg.TokenTTL = 12 * time.Hour
	}
	var fake *fakeTime
	if cfg.FakeClock != nil {
		fake = &fakeTime{fake: cfg.FakeClock, last: time.Now()}
		cfg.Now = fake.now
	}
	if cfg.Now == nil {
		cfg.Now = clock.System{}.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.CampaignLimits == (limits.Limits{}) {
		cfg.CampaignLimits = limits.Defaults()
	}
	file, saved, err := openState(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	s, err := build(cfg, file, saved)
	if err != nil {
		_ = file.close()
		return nil, err
	}
	s.fake = fake
	return s, nil
}

func build(cfg Config, file *stateFile, saved map[string]json.RawMessage) (*Server, error) {
	topics := LocalTopics(localShards)
	db := newStore(topics)
	s := &Server{cfg: cfg, log: cfg.Log, db: db, file: file, policy: identity.NewSignUpPolicy(cfg.AllowedEmailDomains),
		campTimer: inmem.NewTimerOf(cfg.Timer, campaign.TaskSchema, cfg.Now, ttlDelay(cfg.TTLMaxDelay)), saved: map[string]savedPart{}}
	var err error
	if s.sns, err = newLocalSNS(db, topics, cfg.Now, cfg.Log); err != nil {
		return nil, fmt.Errorf("devserver: %w", err)
	}
	p, err := pipeline.New(pipeline.Options{WebURL: cfg.PublicURL, Notifier: s.sns, Options: inproc.Options{Start: cfg.Now(),
		Log: cfg.Log, Timer: cfg.Timer, TTLDelay: ttlDelay(cfg.TTLMaxDelay)}})
	if err != nil {
		return nil, fmt.Errorf("devserver: pipeline: %w", err)
	}
	s.pipe = p
	if err := s.restore(saved); err != nil {
		return nil, err
	}
	key, err := db.Secret("token-signing-key", 32)
	if err != nil {
		return nil, err
	}
	if s.signer, err = NewSigner(key, cfg.TokenTTL, cfg.Now); err != nil {
		return nil, err
	}
	if s.subscriber, err = notify.NewSubscriber(notify.SubscriberDeps{Subscriptions: s.sns, Settings: db.settings,
		TopicArns: topics, Log: cfg.Log, Now: cfg.Now}); err != nil {
		return nil, fmt.Errorf("devserver: %w", err)
	}
	deps := s.reconcileDeps()
	deps.Checkpoints = db.reconcileCP
	if s.reconciler, err = reconcile.New(reconcile.Config{}, deps); err != nil {
		return nil, fmt.Errorf("devserver: %w", err)
	}
	// One key, kept across restarts, seals both APIs' page cursors.
	cursorKey, err := db.Secret("page-cursor-key", pagecursor.MinSecretBytes)
	if err != nil {
		return nil, err
	}
	if s.cursors, err = pagecursor.New(cursorKey); err != nil {
		return nil, fmt.Errorf("devserver: %w", err)
	}
	s.api = api.NewWithNotifications(apiClock{p.Service, wallClock{s}}, s.cursors, s.subscriber, s.origins(), cfg.Log)
	if err := s.openCampaigns(s.origins()); err != nil {
		return nil, err
	}
	return s, nil
}

// reconcileDeps wire the task reconciler on the timer in use; it waits in
// real time, as the deployed one.
func (s *Server) reconcileDeps() reconcile.Deps {
	p := s.pipe
	return reconcile.Deps{Schema: task.Schema, Items: task.NewReconcileView(p.Store, p.Store), Scheduler: p.Timer,
		Schedules: p.Timer, Firer: p.Firer, Clock: wallClock{s}, Sleep: reconcile.Sleep, Log: s.log}
}

// origins are the allowed CORS origins: the server's own and the extra ones.
func (s *Server) origins() []string {
	if s.cfg.PublicURL == "" {
		return s.cfg.ExtraOrigins
	}
	return append([]string{s.cfg.PublicURL}, s.cfg.ExtraOrigins...)
}

// apiClock is the task service reading the wall clock: the API checks
// deadlines against the request's time, not the last step's.
type apiClock struct {
	*task.Service
	clock wallClock
}

func (a apiClock) Now() time.Time { return a.clock.Now() }

// part is one part of the saved state.
type part struct {
	name string
	v    interface {
		json.Marshaler
		json.Unmarshaler
	}
}

// versioned is a store that tells whether it changed, so a save does not
// encode it again when it did not (a campaign's tasks run to thousands).
type versioned interface{ Version() uint64 }

// jsonFunc is a part that is not a store: get saves, set restores.
type jsonFunc[T any] struct {
	get func() T
	set func(T) error
}

func (j jsonFunc[T]) MarshalJSON() ([]byte, error) { return json.Marshal(j.get()) }

func (j jsonFunc[T]) UnmarshalJSON(b []byte) error {
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	return j.set(v)
}

// timerPart saves what a timer stand-in holds, and restores it armed.
func timerPart(t inmem.TimerScheduler) jsonFunc[[]timer.Schedule] {
	return jsonFunc[[]timer.Schedule]{get: t.All, set: func(ss []timer.Schedule) error {
		for _, sc := range ss {
			if err := t.Arm(context.Background(), sc); err != nil {
				return fmt.Errorf("restore schedule %s: %w", sc.Name, err)
			}
		}
		return nil
	}}
}

// parts are the saved state, each read before the parts its writers
// write to first (a schedule before its checkpoint, an email before its
// task), so a save may miss a later step, never hold it without the earlier.
func (s *Server) parts() []part {
	return []part{
		{"campaignCheckpoints", s.db.checkpoints},
		{"campaignSchedules", timerPart(s.campTimer)},
		{"campaigns", s.db.campaigns},
		{"senderLimits", s.db.limits},
		{"tasks", jsonFunc[[]task.Task]{get: s.pipe.Store.All, set: func(ts []task.Task) error {
			for _, t := range ts {
				s.pipe.Store.Put(t)
			}
			return nil
		}}},
		{"schedules", timerPart(s.pipe.Timer)},
		{"settings", s.db.settings},
		{"local", &s.db.local},
		{"sns", s.db.sns},
		{"reconcileCheckpoint", jsonFunc[reconcile.Checkpoint]{
			get: func() reconcile.Checkpoint { cp, _ := s.db.reconcileCP.Load(context.Background()); return cp },
			set: func(cp reconcile.Checkpoint) error { return s.db.reconcileCP.Save(context.Background(), cp) }}},
		{"suppressions", s.db.suppressions},
	}
}

// restore puts the saved parts into the empty stores and timers.
func (s *Server) restore(saved map[string]json.RawMessage) error {
	for _, p := range s.parts() {
		if raw, ok := saved[p.name]; ok {
			if err := p.v.UnmarshalJSON(raw); err != nil {
				return fmt.Errorf("devserver: restore %s from %s: %w", p.name, s.file.path, err)
			}
		}
	}
	if len(saved) > 0 {
		s.log.Info("restored state", "tasks", len(s.pipe.Store.All()), "schedules", len(s.pipe.Timer.All()), "file", s.file.path)
	}
	return nil
}

// persist saves the state if it changed since the last save.
func (s *Server) persist() error {
	s.persistMu.Lock()
	defer s.persistMu.Unlock()
	doc := map[string]json.RawMessage{}
	for _, p := range s.parts() {
		var version uint64
		if v, ok := p.v.(versioned); ok {
			if version = v.Version(); version == s.saved[p.name].version && s.saved[p.name].raw != nil {
				doc[p.name] = s.saved[p.name].raw
				continue
			}
		}
		b, err := json.Marshal(p.v)
		if err != nil {
			return fmt.Errorf("devserver: save %s: %w", p.name, err)
		}
		doc[p.name], s.saved[p.name] = b, savedPart{version, b}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("devserver: save state: %w", err)
	}
	return s.file.save(b)
}

// Tick runs one step at the clock's time: the pipeline to rest, then the
// campaign send schedules due and the failed fires due again, of which it
// returns how many fired; it saves what changed.
func (s *Server) Tick(ctx context.Context) (int, error) {
	s.stepMu.Lock()
	r, err := s.pipe.Drain(ctx, s.cfg.Now())
	s.campaigns.sends.Clock.Set(s.cfg.Now())
	fired := s.campaigns.sends.FireSchedules(ctx).Fired
	s.stepMu.Unlock()
	if r.Moved() {
		s.log.Info("pipeline step", "records", r.Records, "recordsFailed", r.RecordsFailed,
			"delivered", r.Delivered, "deliveriesFailed", r.DeliveriesFailed, "fired", r.Fired, "outcomes", r.Outcomes)
	}
	return fired, errors.Join(err, s.persist())
}

// Reconcile runs the task and campaign reconcilers once, then saves.
func (s *Server) Reconcile(ctx context.Context) error {
	res, err := s.reconciler.Run(ctx)
	if err != nil {
		err = fmt.Errorf("reconcile: %w", err)
	} else {
		s.log.Info("reconciler run", "result", fmt.Sprintf("%+v", res))
	}
	return errors.Join(err, s.campaigns.reconcile(ctx), s.persist())
}

// RunOptions pace Run.
type RunOptions struct {
	// StepEvery is the pipeline's tick. Default: 200 ms.
	StepEvery time.Duration
	// ReconcileEvery is the reconciler's period; it also runs at start.
	// Default: 5 minutes.
	ReconcileEvery time.Duration
}

// Run ticks every StepEvery and reconciles every ReconcileEvery (and at
// start) until ctx ends, then takes a last step.
func (s *Server) Run(ctx context.Context, o RunOptions) {
	if o.StepEvery <= 0 {
		o.StepEvery = 200 * time.Millisecond
	}
	if o.ReconcileEvery <= 0 {
		o.ReconcileEvery = 5 * time.Minute
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(o.ReconcileEvery)
		defer t.Stop()
		for {
			if err := s.Reconcile(ctx); err != nil && ctx.Err() == nil {
				s.log.Error("reconcile failed", "error", err.Error())
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	t := time.NewTicker(o.StepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			if _, err := s.Tick(context.WithoutCancel(ctx)); err != nil {
				s.log.Error("last pipeline step failed", "error", err.Error())
			}
			return
		case <-t.C:
			if _, err := s.Tick(ctx); err != nil && ctx.Err() == nil {
				s.log.Error("pipeline step failed", "error", err.Error())
			}
		}
	}
}

// Close stops the campaign services, saves and releases the data folder.
func (s *Server) Close() error {
	s.campaigns.close()
	return errors.Join(s.persist(), s.file.close())
}

// ttlDelay is the TTL sweeper's delay: uniform in [0, max], max 0 a minute.
func ttlDelay(max time.Duration) func() time.Duration {
	if max <= 0 {
		max = time.Minute
	}
	return func() time.Duration { return time.Duration(rand.Int64N(int64(max) + 1)) }
}
