package smoke

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// world fakes every AWS call of a smoke run, and the deployed app behind
// them, on a virtual clock: the API writes tasks and schedules, a
// completed or moved task's schedule is deleted or moved cancelDelay
// later (the cancellation pipeline), a schedule fires at its time and the
// expiry publishes to the user's shard topic, which delivers to the
// subscribed queue when the filter policy matches.
type world struct {
	mu  sync.Mutex
	now time.Time

	calls   []string
	failOn  map[string]error // call name -> error
	existed bool             // the stack existed before the run
	// foreign: the stack appears between the run's existence check and
	// its deploy, made by someone else (not tagged with the run's id).
	foreign bool
	// stackTags are the tags of the stack; nil while there is no stack.
	stackTags map[string]string
	queueTags map[string]string
	bugs      map[string]bool // defects of the app to inject

	cancelDelay time.Duration
	outputs     map[string]string

	sub, email, password string
	clients              map[string]bool
	users                map[string]bool
	tasks                map[string]*fakeTask
	schedules            map[string]time.Time // task id -> at
	pending              []pendingChange
	queues               map[string]bool
	queuePolicy          string
	subscription         struct{ arn, topic, queueArn, filter string }
	messages             []fakeMessage
	nextID               int
}

type fakeTask struct {
	title, status string
	due           time.Time
}

type pendingChange struct {
	at     time.Time
	taskID string
	moveTo time.Time // zero: delete
	// ghost is a firing of a stale schedule whose expiry publishes anyway.
	ghost bool
}

type fakeMessage struct {
	visibleAt time.Time
	body      string
}

const (
	testRegion = "eu-west-1"
	testTopic0 = "arn:aws:sns:eu-west-1:123456789012:Unschedule-dev-notify-0"
)

func newWorld() *world {
	return &world{
		now:         time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC),
		failOn:      map[string]error{},
		bugs:        map[string]bool{},
		cancelDelay: 3 * time.Second,
		outputs: map[string]string{
			"Region": testRegion, "ApiUrl": "https://api.example/prod/", "UserPoolId": "eu-west-1_pool",
			"UserPoolClientId": "webclient", "NotificationTopicArn": testTopic0, "NotificationTopicShards": "2",
			"TableName": "tasks", "ScheduleGroup": "group", "WebUrl": "https://web.example",
		},
		clients: map[string]bool{}, users: map[string]bool{}, tasks: map[string]*fakeTask{},
		schedules: map[string]time.Time{}, queues: map[string]bool{},
	}
}

func (w *world) deps() Deps {
	return Deps{Credentials: w, CDK: w, AWS: w,
		NewTasks: func(apiURL, tok string) Tasks {
			w.call("new-tasks-client " + apiURL + " " + tok)
			return fakeAPI{w}
		}, Clock: w}
}

// call records a call and returns the error injected for it.
func (w *world) call(name string) error {
	w.calls = append(w.calls, name)
	return w.failOn[strings.Fields(name)[0]]
}

func (w *world) Now() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now
}

func (w *world) Sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance(d)
	return ctx.Err()
}

// advance moves the clock by d, running the app's events in time order.
func (w *world) advance(d time.Duration) {
	end := w.now.Add(d)
	for {
		next, ok := w.nextEvent()
		if !ok || next.After(end) {
			break
		}
		w.now = next
		w.runEvents()
	}
	w.now = end
}

func (w *world) nextEvent() (time.Time, bool) {
	var times []time.Time
	for _, c := range w.pending {
		times = append(times, c.at)
	}
	for _, at := range w.schedules {
		times = append(times, at)
	}
	if len(times) == 0 {
		return time.Time{}, false
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	return times[0], true
}

func (w *world) runEvents() {
	keep := w.pending[:0]
	for _, c := range w.pending {
		switch {
		case c.at.After(w.now):
			keep = append(keep, c)
		case c.ghost:
			w.publish(w.tasks[c.taskID], c.at.Add(time.Second))
		case c.moveTo.IsZero():
			delete(w.schedules, c.taskID)
		default:
			if _, ok := w.schedules[c.taskID]; ok {
				w.schedules[c.taskID] = c.moveTo
			}
		}
	}
	w.pending = keep
	for id, at := range w.schedules {
		if at.After(w.now) {
			continue
		}
		delete(w.schedules, id) // ActionAfterCompletion DELETE
		t := w.tasks[id]
		if t == nil {
			continue
		}
		if t.status == "Pending" && t.due.Equal(at) && !w.bugs["the expiry does not publish"] {
			t.status = "Expired"
			w.publish(t, at.Add(time.Second))
		}
	}
}

// publish is the expiry's SNS publish: to the user's shard topic, with the
// userId attribute; the subscription delivers it if its filter matches.
func (w *world) publish(t *fakeTask, at time.Time) {
	if w.bugs["notifies before the deadline"] {
		at = t.due.Add(-30 * time.Second)
	}
	topics, _ := ParseOutputs(w.outputs)
	s := w.subscription
	if s.topic != notify.TopicFor(topics.TopicArns, w.sub) || !notify.SamePolicy(s.filter, notify.FilterPolicy(w.sub)) {
		return
	}
	m := notify.FormatMessage(task.Notification{Title: t.title, DueAt: t.due})
	body, _ := json.Marshal(map[string]any{"Type": "Notification", "MessageId": "m", "TopicArn": s.topic,
		"Subject": m.Subject, "Message": m.Body, "Timestamp": at.UTC().Format("2006-01-02T15:04:05.000Z"),
		"MessageAttributes": map[string]any{"userId": map[string]string{"Type": "String", "Value": w.sub}}})
	w.messages = append(w.messages, fakeMessage{visibleAt: at.Add(500 * time.Millisecond), body: string(body)})
}

// Credentials.
func (w *world) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "AKID", SecretAccessKey: "secret", Source: "EnvConfigCredentials"}, w.call("credentials")
}

// CDK. A deploy that creates the stack tags it, even when it then fails
// (CloudFormation keeps a rolled-back stack).
func (w *world) Deploy(_ context.Context, _ string, tags map[string]string) error {
	switch {
	case w.foreign:
		w.stackTags = map[string]string{RunTag: "someone-else"}
	case w.stackTags == nil && !w.existed:
		w.stackTags = map[string]string{}
		maps.Copy(w.stackTags, tags)
	case tags != nil:
		return errors.New("the run passed tags when updating an existing stack")
	}
	return w.call("deploy")
}

func (w *world) Destroy(context.Context, string) error {
	w.stackTags = nil
	return w.call("destroy")
}

// Stacks.
func (w *world) Tags(context.Context, string) (map[string]string, error) {
	if w.existed && w.stackTags == nil {
		w.stackTags = map[string]string{"owner": "someone"}
	}
	if err := w.call("tags"); err != nil {
		return nil, err
	}
	if w.stackTags == nil {
		return nil, ErrStackNotFound
	}
	return w.stackTags, nil
}

func (w *world) Outputs(context.Context, string) (map[string]string, error) {
	return w.outputs, w.call("outputs")
}

func (w *world) Timer(_ context.Context, _, table string) (timer.Reader, error) {
	return fakeTimer{w}, w.call("timer " + table)
}

// Users.
func (w *world) SignUp(_ context.Context, clientID, email, password string) (string, error) {
	if err := w.call("signup " + clientID); err != nil {
		return "", err
	}
	w.email, w.password, w.sub = email, password, "sub-0001"
	w.users[email] = true
	if w.bugs["sign-up not confirmed"] {
		return w.sub, errors.New("the user is not confirmed")
	}
	return w.sub, nil
}

func (w *world) DeleteUser(_ context.Context, poolID, email string) error {
	delete(w.users, email)
	return w.call("delete-user " + poolID)
}

func (w *world) CreateClient(_ context.Context, poolID, name string) (string, error) {
	if err := w.call("create-client " + poolID); err != nil {
		return "", err
	}
	w.clients["client-1"] = true
	return "client-1", nil
}

func (w *world) SignIn(_ context.Context, poolID, clientID, email, password string) (string, error) {
	if err := w.call("signin " + clientID); err != nil {
		return "", err
	}
	if email != w.email || password != w.password || !w.clients[clientID] {
		return "", errors.New("NotAuthorizedException")
	}
	return "id-token", nil
}

func (w *world) DeleteClient(_ context.Context, _, clientID string) error {
	delete(w.clients, clientID)
	return w.call("delete-client " + clientID)
}

// Queues.
func (w *world) CreateQueue(_ context.Context, name, policy string, tags map[string]string) (string, error) {
	if err := w.call("create-queue " + name); err != nil {
		return "", err
	}
	w.queueTags = tags
	w.queues[name] = true
	w.queuePolicy = policy
	return "https://sqs.example/" + name, nil
}

func (w *world) Receive(ctx context.Context, _ string, wait time.Duration) ([]string, error) {
	if err := w.failOn["receive"]; err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		var out []string
		keep := w.messages[:0]
		for _, m := range w.messages {
			if m.visibleAt.After(w.now) {
				keep = append(keep, m)
			} else {
				out = append(out, m.body)
			}
		}
		w.messages = keep
		if len(out) > 0 || wait <= 0 {
			return out, ctx.Err()
		}
		step := min(wait, time.Second)
		w.advance(step)
		wait -= step
	}
}

func (w *world) DeleteQueue(_ context.Context, url string) error {
	delete(w.queues, url[strings.LastIndex(url, "/")+1:])
	return w.call("delete-queue")
}

// Subscriptions.
func (w *world) Subscribe(_ context.Context, topicArn, queueArn, filter string) (string, error) {
	if err := w.call("subscribe " + topicArn); err != nil {
		return "", err
	}
	w.subscription = struct{ arn, topic, queueArn, filter string }{"sub-arn", topicArn, queueArn, filter}
	return "sub-arn", nil
}

func (w *world) Unsubscribe(context.Context, string) error {
	w.subscription.arn = ""
	return w.call("unsubscribe")
}

// fakeTimer reads the world's schedules.
type fakeTimer struct{ w *world }

func (f fakeTimer) Get(_ context.Context, name string, _ time.Time) (contract.Schedule, error) {
	w := f.w
	if err := w.failOn["get-schedule"]; err != nil {
		return contract.Schedule{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	at, ok := w.schedules[strings.TrimPrefix(name, task.ScheduleNamePrefix)]
	if !ok {
		return contract.Schedule{}, fmt.Errorf("get schedule %s: %w", name, timer.ErrNotFound)
	}
	return contract.Schedule{Name: name, At: at}, nil
}

func (fakeTimer) List(context.Context, timer.PageRequest) (timer.Page, error) {
	return timer.Page{}, errors.New("the smoke run lists no schedules")
}

// fakeAPI is the deployed task API of the world.
type fakeAPI struct{ w *world }

func (a fakeAPI) taskJSON(id string) Task {
	t := a.w.tasks[id]
	return Task{ID: id, Title: t.title, Status: t.status, DueAt: task.FormatTime(t.due)}
}

func (a fakeAPI) Create(_ context.Context, title string, due time.Time) (Task, error) {
	w := a.w
	if err := w.call("api-create " + title); err != nil {
		return Task{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.nextID++
	id := fmt.Sprintf("T%d", w.nextID)
	w.tasks[id] = &fakeTask{title: title, status: "Pending", due: due}
	w.schedules[id] = due
	return a.taskJSON(id), nil
}

func (a fakeAPI) Update(_ context.Context, id string, fields map[string]string) (Task, error) {
	w := a.w
	if err := w.call("api-update " + id); err != nil {
		return Task{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.tasks[id]
	if fields["status"] == "done" {
		t.status = "Done"
		if !w.bugs["the pipeline does not cancel"] {
			w.pending = append(w.pending, pendingChange{at: w.now.Add(w.cancelDelay), taskID: id})
		}
	}
	if d := fields["dueAt"]; d != "" {
		due, _ := task.ParseTime(d)
		if w.bugs["the old deadline fires too"] {
			w.pending = append(w.pending, pendingChange{at: t.due, taskID: id, ghost: true})
		}
		t.due = due
		if !w.bugs["the pipeline does not move"] {
			w.pending = append(w.pending, pendingChange{at: w.now.Add(w.cancelDelay), taskID: id, moveTo: due})
		}
	}
	return a.taskJSON(id), nil
}

func (a fakeAPI) Get(_ context.Context, id string) (Task, error) {
	if err := a.w.call("api-get " + id); err != nil {
		return Task{}, err
	}
	a.w.mu.Lock()
	defer a.w.mu.Unlock()
	return a.taskJSON(id), nil
}

func (a fakeAPI) Delete(_ context.Context, id string) error {
	a.w.mu.Lock()
	delete(a.w.tasks, id)
	delete(a.w.schedules, id)
	a.w.mu.Unlock()
	return a.w.call("api-delete " + id)
}
