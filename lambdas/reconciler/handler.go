package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/adapters/awsscheduler"
	"github.com/unschedule/unschedule/internal/adapters/awssns"
	"github.com/unschedule/unschedule/internal/lambdaenv"
	"github.com/unschedule/unschedule/internal/metrics"
	"github.com/unschedule/unschedule/internal/reconcile"
)

// FunctionName is the Function dimension of this function's metrics.
const FunctionName = metrics.FunctionReconciler

// StopMargin is kept free at the end of an invocation, so the run stops
// and saves its checkpoint before Lambda's timeout ends it.
const StopMargin = 15 * time.Second

// config is what the function reads from its environment.
type config struct {
	Table     string
	Scheduler awsscheduler.Config
	TopicArns []string
	WebURL    string
	Reconcile reconcile.Config
}

// loadConfig reads the environment through getenv. GRACE_SEC, RATE_PER_SEC
// and BUDGET_SEC are optional (see reconcile.Config for defaults); WEB_URL
// is optional (notifications then carry no link).
func loadConfig(getenv func(string) string) (config, error) {
	c := config{
		Table: getenv("TABLE_NAME"),
		Scheduler: awsscheduler.Config{
			GroupName:     getenv("SCHEDULE_GROUP"),
			TargetArn:     getenv("EXPIRY_FUNCTION_ARN"),
			RoleArn:       getenv("SCHEDULER_ROLE_ARN"),
			DeadLetterArn: getenv("SCHEDULER_DLQ_ARN"),
		},
		WebURL: getenv("WEB_URL"),
	}
	var errs []error
	for _, v := range []struct{ name, value, want string }{
		{"TABLE_NAME", c.Table, "the task table's name"},
		{"SCHEDULE_GROUP", c.Scheduler.GroupName, "the task schedule group's name"},
		{"EXPIRY_FUNCTION_ARN", c.Scheduler.TargetArn, "the expiry function's ARN"},
		{"SCHEDULER_ROLE_ARN", c.Scheduler.RoleArn, "the role the scheduler assumes to invoke it"},
		{"SCHEDULER_DLQ_ARN", c.Scheduler.DeadLetterArn, "the schedules' dead-letter queue ARN"},
	} {
		if v.value == "" {
			errs = append(errs, fmt.Errorf("%s is empty: set it to %s", v.name, v.want))
		}
	}
	// The notification topics are found exactly as the expiry function
	// finds them, so an expiry by the reconciler reaches the same user.
	env := lambdaenv.New(getenv)
	c.TopicArns = awssns.TopicArnsFromEnv(env)
	if err := env.Err(); err != nil {
		errs = append(errs, err)
	}
	var err error
	if c.Reconcile.Grace, err = seconds(getenv, "GRACE_SEC"); err != nil {
		errs = append(errs, err)
	}
	if c.Reconcile.Budget, err = seconds(getenv, "BUDGET_SEC"); err != nil {
		errs = append(errs, err)
	}
	if s := getenv("RATE_PER_SEC"); s != "" {
		if c.Reconcile.RatePerSec, err = strconv.ParseFloat(s, 64); err != nil || c.Reconcile.RatePerSec <= 0 {
			errs = append(errs, fmt.Errorf("RATE_PER_SEC must be a number of calls per second above 0 (given %q)", s))
		}
	}
	return c, errors.Join(errs...)
}

// seconds reads an optional whole number of seconds above 0 (0 when
// unset, which means the default).
func seconds(getenv func(string) string, name string) (time.Duration, error) {
	s := getenv(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s must be a whole number of seconds above 0 (given %q)", name, s)
	}
	return time.Duration(n) * time.Second, nil
}

type runner interface {
	Run(ctx context.Context) (reconcile.Result, error)
}

type counter interface {
	Flush() error
}

type handler struct {
	run     runner
	metrics counter
	log     *slog.Logger
	margin  time.Duration
}

// handle runs one reconciliation on a scheduled invocation. The run stops
// at its budget, or StopMargin before the invocation's deadline, whichever
// comes first, and resumes from its checkpoint on the next invocation. An
// error means the run could not go on (the checkpoint or a page read
// failed); repairs that failed one by one are only counted.
func (h *handler) handle(ctx context.Context, ev events.EventBridgeEvent) error {
	defer func() {
		if err := h.metrics.Flush(); err != nil {
			h.log.WarnContext(ctx, "writing metrics failed", "error", err)
		}
	}()
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-h.margin))
		defer cancel()
	}
	h.log.InfoContext(ctx, "scheduled reconciliation", "eventId", ev.ID, "time", ev.Time)
	if _, err := h.run.Run(ctx); err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	return nil
}
