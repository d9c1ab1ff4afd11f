package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/todometrics"
)

// FunctionName is the Function dimension of this trigger's metrics.
const FunctionName = todometrics.FunctionPostAuth

// Budget bounds the SNS work of one sign-in. Cognito waits 5 seconds for a
// trigger and fails the sign-in after that, so the work is cut off well
// before: a slow SNS must not block a sign-in any more than a failing one.
const Budget = 3 * time.Second

// signInHook is the notification rule run on each sign-in.
type signInHook interface {
	OnSignIn(ctx context.Context, sub, email string) notify.Outcome
}

// counter is the metrics recorder: counts, then one flush per invocation.
type counter interface {
	Add(name string, n float64)
	Flush() error
}

type handler struct {
	hook    signInHook
	metrics counter
	log     *slog.Logger
	budget  time.Duration
}

func newHandler(hook signInHook, metrics counter, log *slog.Logger) *handler {
	return &handler{hook: hook, metrics: metrics, log: log, budget: Budget}
}

// signInUser takes the user from the event: their sub and email.
func signInUser(ev events.CognitoEventUserPoolsPostAuthentication) (sub, email string) {
	return ev.Request.UserAttributes["sub"], ev.Request.UserAttributes["email"]
}

// handle runs the notification rule and returns the event unchanged with
// no error, whatever happened: a notification problem never blocks a
// sign-in. Even a panic is recovered, logged and counted.
func (h *handler) handle(ctx context.Context, ev events.CognitoEventUserPoolsPostAuthentication) (out events.CognitoEventUserPoolsPostAuthentication, err error) {
	defer func() {
		if r := recover(); r != nil {
			h.metrics.Add(notify.MetricSubscribeErrors, 1)
			h.log.ErrorContext(ctx, "postauth: recovered from a panic; sign-in continues", "panic", fmt.Sprint(r))
		}
		if ferr := h.metrics.Flush(); ferr != nil {
			h.log.WarnContext(ctx, "postauth: writing metrics failed", "error", ferr.Error())
		}
		out, err = ev, nil
	}()
	ctx, cancel := context.WithTimeout(ctx, h.budget)
	defer cancel()
	sub, email := signInUser(ev)
	h.hook.OnSignIn(ctx, sub, email)
	return ev, nil
}
