package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/futureevents/client"
	"github.com/unschedule/unschedule/futureevents/futureevent"
	"github.com/unschedule/unschedule/internal/core/fire"
)

// The future events' invariants (FutureEvents).
const (
	invEventOnce       = "F1"
	invEventOnTime     = "F2"
	invEventCancelled  = "F3"
	invEventRefused    = "F4"
	invEventLive       = "F5"
	eventLossInv       = 6
	registeredA        = "arn:aws:lambda:eu-west-1:111122223333:function:remind"
	registeredB        = "arn:aws:lambda:eu-west-1:111122223333:function:expire-trial"
	unregisteredTarget = "arn:aws:lambda:eu-west-1:111122223333:function:deleteEverything"
)

// eventGen is one event the app scheduled under a name (a name is free
// again after a cancel): its arguments and what became of it.
type eventGen struct {
	id         int
	name       string
	at         time.Time
	target     string
	registered bool
	// written: the client's put took effect; cancelled: a Cancel's
	// delete took effect (the event was waiting).
	written, cancelled bool
	deliveries         []eventDelivery
}

type eventDelivery struct {
	at     time.Time
	target string
}

// events is a future-events history: the app schedules and cancels
// events with the real client (futureevents/client) over a DynamoDB
// stand-in (eventsTable) on the adopter's table, and the real dispatcher
// (futureevent.Dispatcher) is the core's target.
type events struct {
	*adopter
	client *client.Client
	gens   []*eventGen
	names  []string
}

// runFutureEvents simulates one future-events history and checks:
//
//   - F1 (exactly once): an event the client scheduled, not cancelled,
//     for a registered target, reaches that target with its payload, at
//     most once unless a crash fell after the target ran or its record
//     was lost; no delivery of an event never scheduled; a taken name is
//     never scheduled over;
//   - F2 (on time): no delivery before the event's moment (late is the
//     timer's: up to the Scheduler's minute and retries, 48 hours on TTL);
//   - F3 (cancel): an event whose Cancel took effect is never delivered;
//   - F4 (refused): an event for an unregistered target is never
//     delivered nor marked delivered;
//   - F5 (liveness): every event of F1 is delivered by the end, its item
//     Fired and marked delivered;
//   - F6: nothing is lost or loops (stream, queue, firings; as I4).
func runFutureEvents(cfg Config) Result {
	a := newAdopter(cfg, futureevent.Schema(), "F", eventLossInv, start)
	e := &events{adopter: a}
	for i := range 4 + a.rng.Intn(12) {
		e.names = append(e.names, fmt.Sprintf("ev-%d", i))
	}
	api := &eventsTable{e: e}
	c, err := client.New(api, "FutureEvents")
	must(err)
	e.client = c.WithClock(a.clock.Now)
	targets := []string{registeredA, registeredB}
	if cfg.Mutation.Adopter.AllTargets {
		targets = append(targets, unregisteredTarget)
	}
	d, err := futureevent.NewDispatcher(targets, e.client, eventInvoker{e}, discard, noMetrics{})
	must(err)
	a.target = fire.DeliverFunc(func(ctx context.Context, p contract.Payload) error {
		return d.Handle(ctx, json.RawMessage(a.schema.EncodePayload(p)))
	})
	a.refused = func(err error) bool { return errors.Is(err, futureevent.ErrRefused) }
	a.step = func() time.Duration { return time.Duration(1+a.rng.Intn(15)) * time.Second }
	a.history(40+a.rng.Intn(160), e.op)
	e.check()
	return a.res
}

type noMetrics struct{}

func (noMetrics) Add(string, float64) {}

// op is one call of the app: schedule (a new event, the same again, or
// another over a taken name), cancel, or a cancel in the instant its
// timer fires.
func (e *events) op() {
	name := e.names[e.rng.Intn(len(e.names))]
	switch k := e.rng.Intn(20); {
	case k < 18:
		e.schedule(name)
	case k < 19:
		e.cancel(name, false)
	default:
		for _, sc := range e.sched.All() {
			if !sc.At.After(e.clock.Now()) {
				e.cancel(sc.Payload.Key.Partition, true)
				return
			}
		}
	}
}

// current is the event the table holds under name (nil: none).
func (e *events) current(name string) *eventGen {
	attrs, ok := e.items.Attrs(contract.Key{Partition: name})
	if !ok {
		return nil
	}
	return e.genOf(attrs[futureevent.PayloadAttr])
}

func (e *events) genOf(payload string) *eventGen {
	var p struct{ Gen int }
	if json.Unmarshal([]byte(payload), &p) != nil || p.Gen < 1 || p.Gen > len(e.gens) {
		return nil
	}
	return e.gens[p.Gen-1]
}

func (e *events) schedule(name string) {
	now := e.clock.Now()
	g := &eventGen{id: len(e.gens) + 1, name: name, at: now.Add(time.Duration(1+e.rng.Intn(10*60)) * time.Second).Truncate(time.Second),
		target: []string{registeredA, registeredB}[e.rng.Intn(2)], registered: true}
	if e.rng.Float64() < 0.1 {
		g.target, g.registered = unregisteredTarget, false
		e.res.Faults[FaultUnregisteredTarget]++ // an action, not a failure
	}
	cur := e.current(name)
	same := cur != nil && cur.at.After(now) && e.rng.Float64() < 0.5
	if same {
		g = cur // the app calls again with the same arguments
	} else {
		e.gens = append(e.gens, g)
	}
	err := e.retry(func() error {
		return e.client.Schedule(e.ctx, name, g.at, g.target, []byte(`{"gen":`+strconv.Itoa(g.id)+`}`))
	})
	e.tracef("schedule %s gen %d at %s for %s: %v", name, g.id, contract.FormatTime(g.at), g.target, err)
	switch {
	case err == nil:
		if now := e.current(name); now == nil || now != g && !now.sameArgs(g) {
			e.violate(invEventOnce, "Schedule of %s (gen %d) succeeded but the table holds %v", name, g.id, now)
		}
	case errors.Is(err, futureevent.ErrNameConflict):
		if cur == nil || same {
			e.violate(invEventOnce, "Schedule of %s (gen %d) was a name conflict, with %v in the table", name, g.id, cur)
		}
	case !injected(err):
		e.violate(e.lossInv, "Schedule of %s failed without an injected fault: %v", name, err)
	}
}

func (g *eventGen) sameArgs(o *eventGen) bool {
	return g.name == o.name && g.at.Equal(o.at) && g.target == o.target
}

func (e *events) cancel(name string, race bool) {
	if race {
		e.count(FaultDeadlineRace)
	}
	err := e.retry(func() error { return e.client.Cancel(e.ctx, name) })
	e.tracef("cancel %s: %v", name, err)
	if err != nil && !injected(err) {
		e.violate(e.lossInv, "Cancel of %s failed without an injected fault: %v", name, err)
	}
}

// retry is the app's call with one retry after an injected fault.
func (e *events) retry(call func() error) error {
	err := call()
	if err != nil && injected(err) {
		err = call()
	}
	return err
}

func injected(err error) bool {
	return errors.Is(err, errThrottled) || errors.Is(err, errTimeout)
}

func (e *events) check() {
	for _, g := range e.gens {
		k := contract.Key{Partition: g.name}
		if g.written {
			e.res.Items++
		}
		for _, d := range g.deliveries {
			e.res.Deliveries++
			switch {
			case !g.written:
				e.violate(invEventOnce, "event %s gen %d was delivered but never scheduled", g.name, g.id)
			case d.target != g.target:
				e.violate(invEventOnce, "event %s gen %d for %s was delivered to %s", g.name, g.id, g.target, d.target)
			}
			if d.at.Before(g.at) {
				e.violate(invEventOnTime, "event %s gen %d due %s was delivered %s early", g.name, g.id, contract.FormatTime(g.at), g.at.Sub(d.at))
			}
			if g.cancelled {
				e.violate(invEventCancelled, "event %s gen %d was cancelled and delivered at %s", g.name, g.id, contract.FormatTime(d.at))
			}
			if !g.registered {
				e.violate(invEventRefused, "event %s gen %d for the unregistered %s was delivered", g.name, g.id, g.target)
			}
		}
		cur, found, err := e.items.Get(e.ctx, k)
		mine := err == nil && found && cur.Due.Equal(g.at) && e.current(g.name) == g
		switch {
		case !g.registered && mine && cur.Delivered:
			e.violate(invEventRefused, "event %s gen %d for the unregistered %s is marked delivered", g.name, g.id, g.target)
		case !g.written || g.cancelled || !g.registered:
		case len(g.deliveries) == 0:
			e.violate(invEventLive, "event %s gen %d due %s was never delivered", g.name, g.id, contract.FormatTime(g.at))
		case len(g.deliveries) > 1+e.dupAllowed[k]:
			e.violate(invEventOnce, "event %s gen %d was delivered %d times (%d allowed by crashes)", g.name, g.id, len(g.deliveries), 1+e.dupAllowed[k])
		case !mine || cur.State != futureevent.Fired || !cur.Delivered:
			e.violate(invEventLive, "event %s gen %d ends %+v, want Fired and delivered", g.name, g.id, cur)
		}
	}
}

// eventInvoker is the registered target functions: it records each
// invoke, with the target's faults.
type eventInvoker struct{ e *events }

func (v eventInvoker) Invoke(_ context.Context, target string, payload []byte) error {
	e := v.e
	g := e.genOf(string(payload))
	if g == nil {
		e.violate(invEventOnce, "%s was invoked with a payload of no event: %s", target, payload)
		return nil
	}
	return e.effect(contract.Key{Partition: g.name}, func() {
		g.deliveries = append(g.deliveries, eventDelivery{at: e.clock.Now(), target: target})
		e.tracef("delivered %s gen %d to %s", g.name, g.id, target)
	})
}

// eventsTable is DynamoDB as the client sees it, on the adopter's table:
// it evaluates the client's two conditions (client.CreateCondition,
// client.CancelCondition) exactly and refuses any other, and injects
// refused calls and lost answers. CancelAlways drops the cancel's
// condition.
type eventsTable struct{ e *events }

var _ client.API = (*eventsTable)(nil)

func (t *eventsTable) fault(op string) error {
	if t.e.inject(FaultTableCallFailed, 0.05) {
		return fmt.Errorf("dynamodb %s: %w", op, errThrottled)
	}
	return nil
}

func (t *eventsTable) lost(op string) error {
	if t.e.inject(FaultTableAnswerLost, 0.04) {
		return fmt.Errorf("dynamodb %s: %w", op, errTimeout)
	}
	return nil
}

func strAttrs(in map[string]types.AttributeValue) map[string]string {
	out := map[string]string{}
	for k, v := range in {
		if s, ok := v.(*types.AttributeValueMemberS); ok {
			out[k] = s.Value
		}
	}
	return out
}

func (t *eventsTable) key(in map[string]types.AttributeValue) contract.Key {
	return contract.Key{Partition: strAttrs(in)[futureevent.NameAttr]}
}

func (t *eventsTable) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if aws.ToString(in.ConditionExpression) != client.CreateCondition || in.ExpressionAttributeNames["#name"] != futureevent.NameAttr {
		return nil, fmt.Errorf("dynamodb PutItem: unsupported condition %q %v", aws.ToString(in.ConditionExpression), in.ExpressionAttributeNames)
	}
	if err := t.fault("PutItem"); err != nil {
		return nil, err
	}
	attrs := strAttrs(in.Item)
	if _, ok := t.e.items.Attrs(contract.Key{Partition: attrs[futureevent.NameAttr]}); ok {
		return nil, &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
	}
	must(t.e.items.Put(attrs))
	if g := t.e.genOf(attrs[futureevent.PayloadAttr]); g != nil {
		g.written = true
	}
	return &dynamodb.PutItemOutput{}, t.lost("PutItem")
}

func (t *eventsTable) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if err := t.fault("GetItem"); err != nil {
		return nil, err
	}
	attrs, ok := t.e.items.Attrs(t.key(in.Key))
	out := &dynamodb.GetItemOutput{}
	if ok {
		out.Item = map[string]types.AttributeValue{}
		for k, v := range attrs {
			out.Item[k] = &types.AttributeValueMemberS{Value: v}
		}
	}
	return out, nil
}

func (t *eventsTable) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	scheduled, _ := in.ExpressionAttributeValues[":scheduled"].(*types.AttributeValueMemberS)
	if aws.ToString(in.ConditionExpression) != client.CancelCondition || in.ExpressionAttributeNames["#status"] != futureevent.StatusAttr || scheduled == nil {
		return nil, fmt.Errorf("dynamodb DeleteItem: unsupported condition %q", aws.ToString(in.ConditionExpression))
	}
	if err := t.fault("DeleteItem"); err != nil {
		return nil, err
	}
	k := t.key(in.Key)
	attrs, ok := t.e.items.Attrs(k)
	if !ok || attrs[futureevent.StatusAttr] != scheduled.Value && !t.e.cfg.Mutation.Adopter.CancelAlways {
		return nil, &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
	}
	t.e.items.Delete(k)
	if g := t.e.genOf(attrs[futureevent.PayloadAttr]); g != nil {
		g.cancelled = true
		t.e.res.Faults[FaultEventCancelled]++ // an action, not a failure
	}
	return &dynamodb.DeleteItemOutput{}, t.lost("DeleteItem")
}
