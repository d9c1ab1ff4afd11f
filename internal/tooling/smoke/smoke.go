// Package smoke is `make smoke ENV=dev` (docs/deploying.md, "Smoke
// test"): the real task lifecycle in a real account, then the cleanup.
// The AWS calls sit behind the interfaces below (internal/tooling/smokeaws),
// so the run is tested here with fakes.
package smoke

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// CDK deploys and destroys the app's stack.
type CDK interface {
	// Deploy deploys the stack; tags, when given, are the stack's tags
	// (CloudFormation passes them on to every resource that takes tags).
	Deploy(ctx context.Context, stack string, tags map[string]string) error
	Destroy(ctx context.Context, stack string) error
}

// AWS is what the run calls in the account (smokeaws.AWS). SignUp's sub
// with an error is a user created but not confirmed (still deleted).
// Receive is one long poll; it deletes what it read. Every delete answers
// nil when there is nothing to delete.
type AWS interface {
	// Outputs and Tags answer ErrStackNotFound when there is no stack.
	Outputs(ctx context.Context, stack string) (map[string]string, error)
	Tags(ctx context.Context, stack string) (map[string]string, error)
	// Timer reads the schedules of the stack's table.
	Timer(ctx context.Context, stack, table string) (timer.Reader, error)

	SignUp(ctx context.Context, clientID, email, password string) (sub string, err error)
	DeleteUser(ctx context.Context, poolID, email string) error
	CreateClient(ctx context.Context, poolID, name string) (clientID string, err error)
	SignIn(ctx context.Context, poolID, clientID, email, password string) (idToken string, err error)
	DeleteClient(ctx context.Context, poolID, clientID string) error

	CreateQueue(ctx context.Context, name, policy string, tags map[string]string) (url string, err error)
	Receive(ctx context.Context, url string, wait time.Duration) ([]string, error)
	DeleteQueue(ctx context.Context, url string) error
	Subscribe(ctx context.Context, topicArn, queueArn, filterPolicy string) (arn string, err error)
	Unsubscribe(ctx context.Context, arn string) error
}

// Tasks is the deployed task API, called as the signed-in user.
type Tasks interface {
	Create(ctx context.Context, title string, due time.Time) (Task, error)
	Update(ctx context.Context, id string, fields map[string]string) (Task, error)
	Get(ctx context.Context, id string) (Task, error)
	Delete(ctx context.Context, id string) error
}

// Deps are what Run calls.
type Deps struct {
	Credentials aws.CredentialsProvider
	CDK         CDK
	AWS         AWS
	// NewTasks returns the API client for the API URL and ID token.
	NewTasks func(apiURL, idToken string) Tasks
	// Clock. Default: the wall clock.
	Clock clock.Clock
	// Out receives the report, one line per step as it ends.
	Out io.Writer
}

// Config is one smoke run.
type Config struct {
	// Env is the environment (cdk.json): dev or prod.
	Env string
	// Region is the SDK's region; the stack's Region output must match it.
	// Default: not checked.
	Region string
	// KeepStack keeps a stack this run created. A stack that existed
	// before the run is always kept, and a stack is destroyed only when it
	// carries this run's RunTag.
	KeepStack bool
	// Retained says the environment keeps its stateful resources (cdk.json
	// removalPolicy "retain"): a production environment, with real users.
	// Run refuses it unless AllowRetained.
	Retained      bool
	AllowRetained bool
	// Lead is how far ahead each task is due. Default: 2 minutes.
	Lead time.Duration
	// MaxLag is how long past a deadline a notification may take.
	// Default: 5 minutes.
	MaxLag time.Duration
	// EmailDomain is the domain of the test user's address (PreSignUp may
	// allow only some). Default: example.com.
	EmailDomain string
	// RunID names what the run creates ("unschedule-smoke-<id>": the
	// user's address, the app client, the queue) and is the value of
	// RunTag on the stack it creates and the queue. Default: random.
	RunID string
}

const (
	// moveBy is how much later the moved deadline is.
	moveBy = 2 * time.Minute
	// grace is how long past a deadline the run waits to be sure no
	// notification comes.
	grace = 90 * time.Second
	// credentialsTimeout bounds the credentials check.
	credentialsTimeout = 5 * time.Second
	// cleanupTimeout bounds each cleanup step (a stack destroy takes minutes).
	cleanupTimeout = 30 * time.Minute
)

// ErrNoCredentials is the refusal to run without AWS credentials.
var ErrNoCredentials = errors.New("no AWS credentials")

// ErrRetainedEnvironment is the refusal to run against an environment that
// retains its resources, without AllowRetained.
var ErrRetainedEnvironment = errors.New("the environment retains its resources")

// ErrStackNotFound is AWS.Outputs' and AWS.Tags' answer for a stack that does not exist.
var ErrStackNotFound = errors.New("no such stack")

// RunTag is the tag key whose value is the RunID of the run that created
// the resource.
const RunTag = "unschedule:smoke-run"

// Stack is the app's stack name for an environment (app.go).
func Stack(env string) string { return "Unschedule-" + env }

// Step is one line of the report.
type Step struct {
	Name string
	Took time.Duration
	// Note says what was found (ids, times, lags).
	Note string
	Err  error
	// Cleanup marks a step of the final cleanup.
	Cleanup bool
}

// Report is every step run, in order, cleanup last.
type Report struct {
	Steps []Step
}

// Summary is the report as a table: the result, step, latency and note of
// each step.
func (r Report) Summary() string {
	var b strings.Builder
	width := 0
	for _, s := range r.Steps {
		width = max(width, len(s.Name))
	}
	for _, s := range r.Steps {
		b.WriteString(line(s, width))
	}
	return b.String()
}

func line(s Step, width int) string {
	result := "ok"
	note := s.Note
	if s.Err != nil {
		result, note = "FAIL", s.Err.Error()
	}
	return fmt.Sprintf("%-4s  %-*s  %9s  %s\n", result, width, s.Name, s.Took.Round(100*time.Millisecond), note)
}

// run is one smoke run in progress.
type run struct {
	cfg      Config
	d        Deps
	report   Report
	cleanups []cleanup
	failed   bool

	out      Outputs
	email    string
	password string
	sub      string
	tasks    Tasks
	queueURL string
	timer    timer.Reader
	inbox    []Notification
}

type cleanup struct {
	name string
	fn   func(ctx context.Context) (string, error)
}

func (r *run) defaults() {
	c := &r.cfg
	orDefault(&c.Lead, 2*time.Minute)
	orDefault(&c.MaxLag, 5*time.Minute)
	orDefault(&c.EmailDomain, "example.com")
	orDefault(&c.RunID, randomHex(4))
	r.d.Clock = cmp.Or[clock.Clock](r.d.Clock, clock.System{})
	r.d.Out = cmp.Or(r.d.Out, io.Discard)
}

// orDefault sets *p to d when it is unset (zero, or a negative duration).
func orDefault[T cmp.Ordered](p *T, d T) {
	var zero T
	if *p <= zero {
		*p = d
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// step runs fn unless an earlier step failed, times it and reports it.
func (r *run) step(ctx context.Context, name string, fn func(ctx context.Context) (note string, err error)) {
	if r.failed {
		return
	}
	if err := ctx.Err(); err != nil {
		fn = func(context.Context) (string, error) { return "", fmt.Errorf("not started: %w", err) }
	}
	r.failed = r.timed(ctx, Step{Name: name}, fn) != nil
}

// timed runs fn, and reports s with its latency, note and error.
func (r *run) timed(ctx context.Context, s Step, fn func(ctx context.Context) (string, error)) error {
	start := r.d.Clock.Now()
	s.Note, s.Err = fn(ctx)
	s.Took = r.d.Clock.Now().Sub(start)
	r.report.Steps = append(r.report.Steps, s)
	fmt.Fprint(r.d.Out, line(s, 56))
	return s.Err
}

// onCleanup registers fn to run at the end, last registered first.
func (r *run) onCleanup(name string, fn func(ctx context.Context) error) {
	r.cleanups = append(r.cleanups, cleanup{name, func(ctx context.Context) (string, error) { return "", fn(ctx) }})
}

// cleanUp runs every registered cleanup, last first, whatever happened
// before and even when ctx was cancelled (Ctrl-C).
func (r *run) cleanUp(ctx context.Context) {
	base := context.WithoutCancel(ctx)
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		c := r.cleanups[i]
		cctx, cancel := context.WithTimeout(base, cleanupTimeout)
		r.timed(cctx, Step{Name: "cleanup: " + c.name, Cleanup: true}, c.fn)
		cancel()
	}
}

// Run is one smoke run. Its error joins the first failed step and every
// failed cleanup; the report holds every step.
func Run(ctx context.Context, cfg Config, d Deps) (Report, error) {
	r := &run{cfg: cfg, d: d}
	r.defaults()
	if r.cfg.Env == "" {
		return r.report, errors.New("smoke: the environment is required (ENV=dev)")
	}
	stack := Stack(r.cfg.Env)
	fmt.Fprintf(r.d.Out, "smoke run %s: stack %s\n", r.cfg.RunID, stack)

	r.step(ctx, "environment "+r.cfg.Env, r.checkEnvironment)
	r.step(ctx, "AWS credentials", func(ctx context.Context) (string, error) {
		return RequireCredentials(ctx, r.d.Credentials, credentialsTimeout)
	})
	if r.failed {
		// Refuse before anything else: nothing to clean up.
		return r.report, r.report.Steps[len(r.report.Steps)-1].Err
	}
	r.step(ctx, "deploy "+stack, func(ctx context.Context) (string, error) { return r.deploy(ctx, stack) })
	r.step(ctx, "read the stack outputs", func(ctx context.Context) (string, error) { return r.outputs(ctx, stack) })
	r.step(ctx, "sign up through Cognito (PreSignUp confirms)", r.signUp)
	r.step(ctx, "sign in (temporary admin-auth app client)", r.signIn)
	r.step(ctx, "SQS queue subscribed to the user's shard topic", r.subscribeQueue)
	lifecycle(ctx, r)
	r.cleanUp(ctx)

	var errs []error
	for _, s := range r.report.Steps {
		if s.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.Name, s.Err))
		}
	}
	fmt.Fprintf(r.d.Out, "\nsmoke run %s summary:\n%s", r.cfg.RunID, r.report.Summary())
	return r.report, errors.Join(errs...)
}

// checkEnvironment refuses an environment that retains its resources.
func (r *run) checkEnvironment(context.Context) (string, error) {
	if !r.cfg.Retained {
		return "removalPolicy destroy", nil
	}
	if r.cfg.AllowRetained {
		return "removalPolicy retain; allowed (-allow-retained)", nil
	}
	return "", fmt.Errorf("%w: environment %q has removalPolicy \"retain\" in cdk.json, so it is treated as production: "+
		"the smoke test would deploy this working tree over its stack %s and add a test user and an admin-auth app client to its user pool. "+
		"Run it against a disposable environment (ENV=dev), or pass -allow-retained (make smoke ENV=%s SMOKE_FLAGS=-allow-retained) if you mean it; "+
		"nothing was deployed", ErrRetainedEnvironment, r.cfg.Env, Stack(r.cfg.Env), r.cfg.Env)
}

// RequireCredentials resolves the credentials of p (the SDK's default
// chain: environment, shared files, SSO, container and instance roles)
// within timeout, without calling any AWS API, and says how to provide them
// when there are none (the error is ErrNoCredentials). It returns where
// they come from.
func RequireCredentials(ctx context.Context, p aws.CredentialsProvider, timeout time.Duration) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var creds aws.Credentials
	err := errors.New("the SDK found no credential provider")
	if p != nil {
		creds, err = p.Retrieve(cctx)
	}
	if err == nil && !creds.HasKeys() {
		err = errors.New("the credentials have no access key")
	}
	if err != nil {
		return "", fmt.Errorf("%w: `make smoke` deploys to a real AWS account and needs credentials for it. "+
			"Configure them (aws configure, aws sso login, AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) "+
			"and run it again; nothing was deployed (%w)", ErrNoCredentials, err)
	}
	return "from " + creds.Source, nil
}

func (r *run) deploy(ctx context.Context, stack string) (string, error) {
	_, err := r.d.AWS.Tags(ctx, stack)
	existed := err == nil
	if err != nil && !errors.Is(err, ErrStackNotFound) {
		return "", err
	}
	note := "existing stack updated; it is kept"
	var tags map[string]string
	if !existed {
		// Only a stack this run creates carries its tag: an existing
		// stack's tags are left as they are.
		tags = r.tags()
		note = "stack created (tag " + RunTag + "=" + r.cfg.RunID + "); destroyed at the end"
		if r.cfg.KeepStack {
			note = "stack created (tag " + RunTag + "=" + r.cfg.RunID + "); kept (-keep-stack)"
		} else {
			// Registered before the deploy: a failed create leaves a
			// rolled-back stack to delete too.
			r.onCleanup("destroy "+stack, func(ctx context.Context) error { return r.destroy(ctx, stack) })
		}
	}
	if err := r.d.CDK.Deploy(ctx, stack, tags); err != nil {
		return "", err
	}
	return note, nil
}

// tags are what the run tags the resources it creates with.
func (r *run) tags() map[string]string { return map[string]string{RunTag: r.cfg.RunID} }

// destroy destroys the stack only when it carries this run's tag.
func (r *run) destroy(ctx context.Context, stack string) error {
	tags, err := r.d.AWS.Tags(ctx, stack)
	if errors.Is(err, ErrStackNotFound) {
		return nil // the deploy failed before creating it
	}
	if err != nil {
		return fmt.Errorf("read the tags of %s before destroying it: %w", stack, err)
	}
	if got := tags[RunTag]; got != r.cfg.RunID {
		return fmt.Errorf("not destroyed: stack %s has %s=%q, not this run's %q, so this run did not create it; "+
			"destroy it yourself if it is yours (make destroy ENV=%s)", stack, RunTag, got, r.cfg.RunID, r.cfg.Env)
	}
	return r.d.CDK.Destroy(ctx, stack)
}

func (r *run) outputs(ctx context.Context, stack string) (string, error) {
	m, err := r.d.AWS.Outputs(ctx, stack)
	if err != nil {
		return "", err
	}
	if r.out, err = ParseOutputs(m); err != nil {
		return "", err
	}
	if r.cfg.Region != "" && r.out.Region != r.cfg.Region {
		return "", fmt.Errorf("the stack is in %s but the AWS SDK uses %s: set AWS_REGION=%s (the CDK CLI and the smoke test must agree)",
			r.out.Region, r.cfg.Region, r.out.Region)
	}
	if r.timer, err = r.d.AWS.Timer(ctx, stack, r.out.TableName); err != nil {
		return "", err
	}
	return fmt.Sprintf("API %s, %d topic shard(s), table %s, group %s", r.out.APIURL, len(r.out.TopicArns),
		r.out.TableName, r.out.ScheduleGroup), nil
}

func (r *run) signUp(ctx context.Context) (string, error) {
	r.email = "unschedule-smoke-" + r.cfg.RunID + "@" + r.cfg.EmailDomain
	// The pool's policy (constructs/userauth): 12+ characters with upper,
	// lower, digit and symbol.
	r.password = "Smoke-" + randomHex(12) + "-Aa1!"
	sub, err := r.d.AWS.SignUp(ctx, r.out.UserPoolClientID, r.email, r.password)
	if sub != "" {
		// Registered once the user exists: a failed sign-up (the address
		// taken, say) must not delete a user this run did not create.
		email := r.email
		r.onCleanup("delete user "+email, func(ctx context.Context) error {
			return r.d.AWS.DeleteUser(ctx, r.out.UserPoolID, email)
		})
	}
	if err != nil {
		return "", err
	}
	r.sub = sub
	return r.email + ", sub " + sub, nil
}

func (r *run) signIn(ctx context.Context) (string, error) {
	id, err := r.d.AWS.CreateClient(ctx, r.out.UserPoolID, "unschedule-smoke-"+r.cfg.RunID)
	if err != nil {
		return "", err
	}
	r.onCleanup("delete app client "+id, func(ctx context.Context) error {
		return r.d.AWS.DeleteClient(ctx, r.out.UserPoolID, id)
	})
	tok, err := r.d.AWS.SignIn(ctx, r.out.UserPoolID, id, r.email, r.password)
	if err != nil {
		return "", err
	}
	r.tasks = r.d.NewTasks(r.out.APIURL, tok)
	return "app client " + id, nil
}

func (r *run) subscribeQueue(ctx context.Context) (string, error) {
	topic := notify.TopicFor(r.out.TopicArns, r.sub)
	name := "unschedule-smoke-" + r.cfg.RunID
	arn, err := QueueArn(topic, name)
	if err != nil {
		return "", err
	}
	url, err := r.d.AWS.CreateQueue(ctx, name, QueuePolicy(arn, topic), r.tags())
	if err != nil {
		return "", err
	}
	r.queueURL = url
	r.onCleanup("delete queue "+name, func(ctx context.Context) error { return r.d.AWS.DeleteQueue(ctx, url) })
	sub, err := r.d.AWS.Subscribe(ctx, topic, arn, notify.FilterPolicy(r.sub))
	if err != nil {
		return "", err
	}
	r.onCleanup("unsubscribe the queue", func(ctx context.Context) error { return r.d.AWS.Unsubscribe(ctx, sub) })
	return fmt.Sprintf("%s on %s, filter %s", name, topic, notify.FilterPolicy(r.sub)), nil
}

// pollUntil reads the queue into the inbox until the clock reaches until,
// or done reports true.
func (r *run) pollUntil(ctx context.Context, until time.Time, done func() bool) error {
	for {
		if done != nil && done() {
			return nil
		}
		left := until.Sub(r.d.Clock.Now())
		if left <= 0 {
			return nil
		}
		bodies, err := r.d.AWS.Receive(ctx, r.queueURL, left)
		if err != nil {
			return fmt.Errorf("read the queue: %w", err)
		}
		for _, b := range bodies {
			n, err := ParseNotification(b)
			if err != nil {
				return fmt.Errorf("a message on the queue: %w", err)
			}
			n.Received = r.d.Clock.Now()
			r.inbox = append(r.inbox, n)
		}
	}
}

// received are the inbox's notifications of the task titled title.
func (r *run) received(title string) []Notification {
	subject := notify.FormatMessage(task.Notification{Title: title}).Subject
	var out []Notification
	for _, n := range r.inbox {
		if n.Subject == subject {
			out = append(out, n)
		}
	}
	return out
}
