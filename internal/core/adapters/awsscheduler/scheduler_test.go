package awsscheduler

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/aws/smithy-go"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
)

// fakeAPI records requests and answers with err (or a canned output).
type fakeAPI struct {
	err     error
	create  []*scheduler.CreateScheduleInput
	update  []*scheduler.UpdateScheduleInput
	deletes []*scheduler.DeleteScheduleInput
	gets    []*scheduler.GetScheduleInput
	lists   []*scheduler.ListSchedulesInput
	getOut  *scheduler.GetScheduleOutput
	// listOut maps a NextToken ("" for the first call) to a page.
	listOut map[string]*scheduler.ListSchedulesOutput
}

func (f *fakeAPI) CreateSchedule(_ context.Context, in *scheduler.CreateScheduleInput, _ ...func(*scheduler.Options)) (*scheduler.CreateScheduleOutput, error) {
	f.create = append(f.create, in)
	if f.err != nil {
		return nil, f.err
	}
	return &scheduler.CreateScheduleOutput{ScheduleArn: aws.String("arn:schedule")}, nil
}

func (f *fakeAPI) UpdateSchedule(_ context.Context, in *scheduler.UpdateScheduleInput, _ ...func(*scheduler.Options)) (*scheduler.UpdateScheduleOutput, error) {
	f.update = append(f.update, in)
	if f.err != nil {
		return nil, f.err
	}
	return &scheduler.UpdateScheduleOutput{ScheduleArn: aws.String("arn:schedule")}, nil
}

func (f *fakeAPI) DeleteSchedule(_ context.Context, in *scheduler.DeleteScheduleInput, _ ...func(*scheduler.Options)) (*scheduler.DeleteScheduleOutput, error) {
	f.deletes = append(f.deletes, in)
	if f.err != nil {
		return nil, f.err
	}
	return &scheduler.DeleteScheduleOutput{}, nil
}

func (f *fakeAPI) GetSchedule(_ context.Context, in *scheduler.GetScheduleInput, _ ...func(*scheduler.Options)) (*scheduler.GetScheduleOutput, error) {
	f.gets = append(f.gets, in)
	if f.err != nil {
		return nil, f.err
	}
	return f.getOut, nil
}

func (f *fakeAPI) ListSchedules(_ context.Context, in *scheduler.ListSchedulesInput, _ ...func(*scheduler.Options)) (*scheduler.ListSchedulesOutput, error) {
	f.lists = append(f.lists, in)
	if f.err != nil {
		return nil, f.err
	}
	return f.listOut[aws.ToString(in.NextToken)], nil
}

var testCfg = Config{
	GroupName:     "tasks",
	TargetArn:     "arn:aws:lambda:us-east-1:123456789012:function:expire",
	RoleArn:       "arn:aws:iam::123456789012:role/scheduler",
	DeadLetterArn: "arn:aws:sqs:us-east-1:123456789012:expire-dlq",
	Schema:        timertest.Schema,
}

func newClient(t *testing.T, api API, cfg Config) *Client {
	t.Helper()
	c, err := New(api, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var testSchedule = contract.Schedule{
	Name:        timertest.Schema.ScheduleName(contract.Key{Sort: "01JD00000000000000000000AA"}),
	At:          time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC),
	ClientToken: strings.Repeat("ab", 32),
	Payload:     contract.Payload{Key: contract.Key{Partition: "user-1", Sort: "01JD00000000000000000000AA"}, Due: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)},
}

func TestNewValidatesConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(*Config)
		wantErr string // "" for success
	}{
		{"complete", func(*Config) {}, ""},
		{"no group", func(c *Config) { c.GroupName = "" }, "GroupName"},
		{"no target", func(c *Config) { c.TargetArn = "" }, "TargetArn"},
		{"no role", func(c *Config) { c.RoleArn = "" }, "RoleArn"},
		{"no dead-letter queue", func(c *Config) { c.DeadLetterArn = "" }, "DeadLetterArn"},
		{"no schema", func(c *Config) { c.Schema = contract.Schema{} }, "Schema"},
		{"too many retries", func(c *Config) { c.MaxRetryAttempts = 186 }, "given 186"},
		{"negative retries", func(c *Config) { c.MaxRetryAttempts = -1 }, "MaxRetryAttempts"},
		{"event age too short", func(c *Config) { c.MaxEventAgeSec = 59 }, "given 59"},
		{"event age too long", func(c *Config) { c.MaxEventAgeSec = 86401 }, "MaxEventAgeSec"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testCfg
			tc.edit(&cfg)
			_, err := New(&fakeAPI{}, cfg)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error = %v, want one naming %q", err, tc.wantErr)
			}
		})
	}
	t.Run("nil api", func(t *testing.T) {
		if _, err := New(nil, testCfg); err == nil {
			t.Fatal("want an error")
		}
	})
}

func TestCreateSendsTheWholeDefinition(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		cfg                  Config
		wantRetries, wantAge int32
	}{
		{"defaults", testCfg, 3, 86400},
		{"configured", func() Config { c := testCfg; c.MaxRetryAttempts, c.MaxEventAgeSec = 5, 3600; return c }(), 5, 3600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &fakeAPI{}
			if err := newClient(t, api, tc.cfg).Arm(context.Background(), testSchedule); err != nil {
				t.Fatal(err)
			}
			if len(api.create) != 1 {
				t.Fatalf("%d CreateSchedule calls, want 1", len(api.create))
			}
			in := api.create[0]
			payload, err := timertest.Schema.DecodePayload([]byte(aws.ToString(in.Target.Input)))
			if err != nil {
				t.Fatalf("target input: %v", err)
			}
			for _, f := range []struct {
				field     string
				got, want any
			}{
				{"Name", aws.ToString(in.Name), "item-01JD00000000000000000000AA"},
				{"GroupName", aws.ToString(in.GroupName), "tasks"},
				// Due 03:04:05: placed on the next whole minute.
				{"ScheduleExpression", aws.ToString(in.ScheduleExpression), "at(2030-01-02T03:05:00)"},
				{"ScheduleExpressionTimezone", aws.ToString(in.ScheduleExpressionTimezone), "UTC"},
				{"FlexibleTimeWindow", in.FlexibleTimeWindow.Mode, types.FlexibleTimeWindowModeOff},
				{"FlexibleTimeWindow.MaximumWindowInMinutes", in.FlexibleTimeWindow.MaximumWindowInMinutes, (*int32)(nil)},
				{"ActionAfterCompletion", in.ActionAfterCompletion, types.ActionAfterCompletionDelete},
				{"ClientToken", aws.ToString(in.ClientToken), testSchedule.ClientToken},
				{"State", in.State, types.ScheduleStateEnabled},
				{"Target.Arn", aws.ToString(in.Target.Arn), testCfg.TargetArn},
				{"Target.RoleArn", aws.ToString(in.Target.RoleArn), testCfg.RoleArn},
				{"Target.Input", payload, testSchedule.Payload},
				{"Target.RetryPolicy.MaximumRetryAttempts", aws.ToInt32(in.Target.RetryPolicy.MaximumRetryAttempts), tc.wantRetries},
				{"Target.RetryPolicy.MaximumEventAgeInSeconds", aws.ToInt32(in.Target.RetryPolicy.MaximumEventAgeInSeconds), tc.wantAge},
				{"Target.DeadLetterConfig.Arn", aws.ToString(in.Target.DeadLetterConfig.Arn), testCfg.DeadLetterArn},
				{"StartDate", in.StartDate, (*time.Time)(nil)},
				{"EndDate", in.EndDate, (*time.Time)(nil)},
			} {
				if !reflect.DeepEqual(f.got, f.want) {
					t.Errorf("%s = %v, want %v", f.field, f.got, f.want)
				}
			}
		})
	}
}

func TestUpdateSendsTheSameDefinition(t *testing.T) {
	api := &fakeAPI{}
	c := newClient(t, api, testCfg)
	ctx := context.Background()
	if err := c.Arm(ctx, testSchedule); err != nil {
		t.Fatal(err)
	}
	if err := c.Move(ctx, testSchedule, testSchedule.At); err != nil {
		t.Fatal(err)
	}
	cr, up := api.create[0], api.update[0]
	for _, f := range []struct {
		field     string
		got, want any
	}{
		{"Name", up.Name, cr.Name},
		{"GroupName", up.GroupName, cr.GroupName},
		{"ScheduleExpression", up.ScheduleExpression, cr.ScheduleExpression},
		{"ScheduleExpressionTimezone", up.ScheduleExpressionTimezone, cr.ScheduleExpressionTimezone},
		{"FlexibleTimeWindow", up.FlexibleTimeWindow, cr.FlexibleTimeWindow},
		{"ActionAfterCompletion", up.ActionAfterCompletion, cr.ActionAfterCompletion},
		{"State", up.State, cr.State},
		{"Target", up.Target, cr.Target},
	} {
		if !reflect.DeepEqual(f.got, f.want) {
			t.Errorf("update %s = %v, create sent %v", f.field, f.got, f.want)
		}
	}
}

func TestDeleteAndGetAddressTheGroup(t *testing.T) {
	api := &fakeAPI{getOut: &scheduler.GetScheduleOutput{
		Name: aws.String(testSchedule.Name), ScheduleExpression: aws.String("at(2030-01-02T03:04:05)"),
		Target: &types.Target{Input: aws.String(timertest.Schema.EncodePayload(testSchedule.Payload))},
	}}
	c := newClient(t, api, testCfg)
	if err := c.Disarm(context.Background(), "item-x", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(context.Background(), "item-y", time.Time{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ field, got, want string }{
		{"delete name", aws.ToString(api.deletes[0].Name), "item-x"},
		{"delete group", aws.ToString(api.deletes[0].GroupName), "tasks"},
		{"get name", aws.ToString(api.gets[0].Name), "item-y"},
		{"get group", aws.ToString(api.gets[0].GroupName), "tasks"},
	} {
		if f.got != f.want {
			t.Errorf("%s = %q, want %q", f.field, f.got, f.want)
		}
	}
}

func TestErrorMapping(t *testing.T) {
	conflict := &types.ConflictException{Message: aws.String("exists")}
	missing := &types.ResourceNotFoundException{Message: aws.String("no such schedule")}
	throttled := &types.ThrottlingException{Message: aws.String("slow down")}
	internal := &types.InternalServerException{Message: aws.String("oops")}
	ctx := context.Background()
	ops := map[string]func(c *Client) error{
		"create": func(c *Client) error { return c.Arm(ctx, testSchedule) },
		"update": func(c *Client) error { return c.Move(ctx, testSchedule, testSchedule.At) },
		"delete": func(c *Client) error { return c.Disarm(ctx, testSchedule.Name, testSchedule.At) },
		"get":    func(c *Client) error { _, err := c.Get(ctx, testSchedule.Name, time.Time{}); return err },
		"list":   func(c *Client) error { _, err := c.List(ctx, timer.PageRequest{}); return err },
	}
	for _, tc := range []struct {
		name     string
		op       string
		cause    error
		want     error // a sentinel, or nil when none may match
		throttle bool
	}{
		{"create conflict", "create", conflict, timer.ErrExists, false},
		{"update not found", "update", missing, timer.ErrNotFound, false},
		{"delete not found", "delete", missing, timer.ErrNotFound, false},
		{"get not found", "get", missing, timer.ErrNotFound, false},
		{"create throttled", "create", throttled, nil, true},
		{"update throttled", "update", throttled, nil, true},
		{"delete throttled", "delete", throttled, nil, true},
		{"get throttled", "get", throttled, nil, true},
		{"list throttled", "list", throttled, nil, true},
		{"delete internal error", "delete", internal, nil, false},
		{"create internal error", "create", internal, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ops[tc.op](newClient(t, &fakeAPI{err: tc.cause}, testCfg))
			if err == nil {
				t.Fatal("want an error")
			}
			if !errors.Is(err, tc.cause) {
				t.Errorf("error %v does not wrap the cause", err)
			}
			for _, s := range []error{timer.ErrExists, timer.ErrNotFound} {
				if errors.Is(err, s) != (s == tc.want) {
					t.Errorf("errors.Is(%v, %v) = %v", err, s, !(s == tc.want))
				}
			}
			if IsThrottle(err) != tc.throttle {
				t.Errorf("IsThrottle = %v, want %v", !tc.throttle, tc.throttle)
			}
		})
	}
}

func TestIsThrottleByCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"generic throttling code", &smithy.GenericAPIError{Code: "ThrottlingException"}, true},
		{"too many requests", &smithy.GenericAPIError{Code: "TooManyRequestsException"}, true},
		{"validation", &smithy.GenericAPIError{Code: "ValidationException"}, false},
		{"plain", errors.New("boom"), false},
		{"nil", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsThrottle(tc.err); got != tc.want {
				t.Fatalf("IsThrottle(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// TestScheduleTime: one-off schedules go on the whole minute at or after
// the due time, because EventBridge Scheduler fires anywhere within the
// minute of its expression.
func TestScheduleTime(t *testing.T) {
	at := func(h, m, s, ns int) time.Time { return time.Date(2030, 1, 2, h, m, s, ns, time.UTC) }
	for _, tc := range []struct {
		name      string
		due, want time.Time
	}{
		{"on a whole minute: stays", at(3, 4, 0, 0), at(3, 4, 0, 0)},
		{"one second past: the next minute", at(3, 4, 1, 0), at(3, 5, 0, 0)},
		{"59 seconds past: the next minute", at(3, 4, 59, 0), at(3, 5, 0, 0)},
		{"a fraction is dropped as the firing core drops it", at(3, 4, 0, 500e6), at(3, 4, 0, 0)},
		{"across the hour and the day", time.Date(2030, 12, 31, 23, 59, 30, 0, time.UTC), time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"another zone: the same instant, in UTC", at(3, 4, 5, 0).In(time.FixedZone("+0530", 5*3600+1800)), at(3, 5, 0, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ScheduleTime(tc.due)
			if !got.Equal(tc.want) || got.Location() != time.UTC {
				t.Fatalf("ScheduleTime(%s) = %s, want %s", tc.due, got, tc.want)
			}
			// It never fires before the due time: its minute starts at or after it.
			if got.Truncate(time.Minute).Before(tc.due.Truncate(time.Second)) {
				t.Fatalf("ScheduleTime(%s) = %s may fire before the due time", tc.due, got)
			}
			p := contract.Payload{Key: contract.Key{Partition: "u", Sort: "t"}, Due: tc.due}
			if back := ServedTime(got, p); !back.Equal(tc.due.Truncate(time.Second)) {
				t.Fatalf("ServedTime(%s) = %s, want the due time %s", got, back, tc.due)
			}
		})
	}
}

// reminderPayload is a reminder's, 14:05 before the due time.
var reminderPayload = contract.Payload{Key: testSchedule.Payload.Key, Due: testSchedule.At, Remind: time.Date(2030, 1, 2, 2, 50, 0, 0, time.UTC)}

func TestGetParsesTheSchedule(t *testing.T) {
	input := timertest.Schema.EncodePayload(testSchedule.Payload)
	for _, tc := range []struct {
		name    string
		out     *scheduler.GetScheduleOutput
		want    contract.Schedule
		wantErr bool
	}{
		{"one-off schedule on the minute after its due time: At is the due time", &scheduler.GetScheduleOutput{
			Name: aws.String(testSchedule.Name), ScheduleExpression: aws.String("at(2030-01-02T03:05:00)"),
			ScheduleExpressionTimezone: aws.String("UTC"), Target: &types.Target{Input: aws.String(input)},
		}, contract.Schedule{Name: testSchedule.Name, At: testSchedule.At, Payload: testSchedule.Payload}, false},
		{"at the exact second (may fire 5 s early): At is the start of its minute, so it is misplaced", &scheduler.GetScheduleOutput{
			Name: aws.String(testSchedule.Name), ScheduleExpression: aws.String("at(2030-01-02T03:04:05)"),
			ScheduleExpressionTimezone: aws.String("UTC"), Target: &types.Target{Input: aws.String(input)},
		}, contract.Schedule{Name: testSchedule.Name, At: time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC), Payload: testSchedule.Payload}, false},
		{"a minute late for its payload: misplaced", &scheduler.GetScheduleOutput{
			Name: aws.String(testSchedule.Name), ScheduleExpression: aws.String("at(2030-01-02T03:06:00)"),
			ScheduleExpressionTimezone: aws.String("UTC"), Target: &types.Target{Input: aws.String(input)},
		}, contract.Schedule{Name: testSchedule.Name, At: time.Date(2030, 1, 2, 3, 6, 0, 0, time.UTC), Payload: testSchedule.Payload}, false},
		{"a reminder's: At is its reminder time", &scheduler.GetScheduleOutput{
			Name: aws.String("remind-x"), ScheduleExpression: aws.String("at(2030-01-02T02:50:00)"),
			Target: &types.Target{Input: aws.String(timertest.Schema.EncodePayload(reminderPayload))},
		}, contract.Schedule{Name: "remind-x", At: reminderPayload.Remind, Payload: reminderPayload}, false},
		{"rate expression", &scheduler.GetScheduleOutput{
			Name: aws.String("item-x"), ScheduleExpression: aws.String("rate(5 minutes)"),
			Target: &types.Target{Input: aws.String(input)},
		}, contract.Schedule{}, true},
		{"no target input", &scheduler.GetScheduleOutput{
			Name: aws.String("item-x"), ScheduleExpression: aws.String("at(2030-01-02T03:04:05)"), Target: &types.Target{},
		}, contract.Schedule{}, true},
		{"input not json", &scheduler.GetScheduleOutput{
			Name: aws.String("item-x"), ScheduleExpression: aws.String("at(2030-01-02T03:04:05)"),
			Target: &types.Target{Input: aws.String("{not json")},
		}, contract.Schedule{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := newClient(t, &fakeAPI{getOut: tc.out}, testCfg).Get(context.Background(), "item-x", time.Time{})
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want error %v", err, tc.wantErr)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestListPagesByNextToken(t *testing.T) {
	summary := func(name string) types.ScheduleSummary { return types.ScheduleSummary{Name: aws.String(name)} }
	api := &fakeAPI{listOut: map[string]*scheduler.ListSchedulesOutput{
		"":   {Schedules: []types.ScheduleSummary{summary("item-a"), summary("item-b")}, NextToken: aws.String("t1")},
		"t1": {Schedules: []types.ScheduleSummary{summary("item-c")}},
	}}
	c := newClient(t, api, testCfg)
	var names []string
	cursor := ""
	for i := 0; i < 5; i++ {
		p, err := c.List(context.Background(), timer.PageRequest{Cursor: cursor, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range p.Schedules {
			if !s.At.IsZero() || s.ClientToken != "" || s.Payload != (contract.Payload{}) {
				t.Fatalf("a listed schedule has more than its name: %+v", s)
			}
			names = append(names, s.Name)
		}
		if cursor = p.Cursor; cursor == "" {
			break
		}
	}
	if want := []string{"item-a", "item-b", "item-c"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("names = %v, want %v", names, want)
	}
	if len(api.lists) != 2 {
		t.Fatalf("%d ListSchedules calls, want 2", len(api.lists))
	}
	for i, in := range api.lists {
		for _, f := range []struct {
			field     string
			got, want any
		}{
			{"GroupName", aws.ToString(in.GroupName), "tasks"},
			{"NamePrefix", aws.ToString(in.NamePrefix), timertest.Schema.ScheduleNamePrefix},
			{"MaxResults", aws.ToInt32(in.MaxResults), int32(2)},
			{"NextToken", aws.ToString(in.NextToken), []string{"", "t1"}[i]},
		} {
			if f.got != f.want {
				t.Errorf("call %d %s = %v, want %v", i, f.field, f.got, f.want)
			}
		}
	}
}

func TestListBoundsMaxResults(t *testing.T) {
	for _, tc := range []struct {
		limit int
		want  int32
	}{{0, timer.DefaultLimit}, {7, 7}, {500, 100}} {
		t.Run(fmt.Sprint("limit ", tc.limit), func(t *testing.T) {
			api := &fakeAPI{listOut: map[string]*scheduler.ListSchedulesOutput{"": {}}}
			if _, err := newClient(t, api, testCfg).List(context.Background(), timer.PageRequest{Limit: tc.limit}); err != nil {
				t.Fatal(err)
			}
			if got := aws.ToInt32(api.lists[0].MaxResults); got != tc.want {
				t.Errorf("MaxResults = %d, want %d", got, tc.want)
			}
		})
	}
}

// A consumer's schema renders and reads its own payload: its key and due
// attribute, not the to-do app's.
func TestConsumerSchemaPayload(t *testing.T) {
	s := contract.Schema{PartitionKey: "tenantId", SortKey: "jobId", DueAttr: "runAt",
		ArmedStates: []string{"Queued"}, FiredState: "Done", ScheduleNamePrefix: "job-"}.WithDefaults()
	cfg := testCfg
	cfg.Schema = s
	api := &fakeAPI{}
	c, err := New(api, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sc := s.ScheduleFor(contract.Item{Key: contract.Key{Partition: "t1", Sort: "j1"}, Due: testSchedule.At})
	if err := c.Arm(context.Background(), sc); err != nil {
		t.Fatal(err)
	}
	input := aws.ToString(api.create[0].Target.Input)
	if want := `{"jobId":"j1","runAt":"2030-01-02T03:04:05Z","tenantId":"t1"}`; input != want {
		t.Fatalf("target input %s, want %s", input, want)
	}
	api.getOut = &scheduler.GetScheduleOutput{Name: aws.String(sc.Name), ScheduleExpression: api.create[0].ScheduleExpression,
		Target: &types.Target{Input: aws.String(input)}}
	got, err := c.Get(context.Background(), sc.Name, sc.At)
	if err != nil || !got.Payload.Equal(sc.Payload) || !got.At.Equal(sc.At) {
		t.Fatalf("Get = %+v, %v; want payload %+v at %s", got, err, sc.Payload, sc.At)
	}
}
