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
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/core/fire"
)

// The future events' invariants (runFutureEvents).
const (
	invEventOnce       = "F1"
	invEventOnTime     = "F2"
	invEventCancelled  = "F3"
	invEventRefused    = "F4"
	invEventLive       = "F5"
	registeredA        = "arn:aws:lambda:eu-west-1:111122223333:function:remind"
	registeredB        = "arn:aws:lambda:eu-west-1:111122223333:function:expire-trial"
	unregisteredTarget = "arn:aws:lambda:eu-west-1:111122223333:function:deleteEverything"
)

// eventGen is one event the app scheduled under a name (a name is free
// again after a cancel): its record, its arguments and what became of it.
type eventGen struct {
	record
	id         int
	target     string
	registered bool
	// cancelled: a Cancel's delete took effect (the event was waiting).
	cancelled bool
	// targets are the targets of its runs.
	targets []string
}

func (g *eventGen) name() string { return g.key.Partition }

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

// runFutureEvents simulates one future-events history and checks F1 to
// F6 (docs/simulation.md#future-events-and-deferred-jobs).
func runFutureEvents(cfg Config) Result {
	a := newAdopter(cfg, futureevent.Schema(), start, invEventOnce, invEventOnTime, invEventLive, "F6")
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
	g := &eventGen{record: record{key: contract.Key{Partition: name}, due: now.Add(time.Duration(1+e.rng.Intn(10*60)) * time.Second).Truncate(time.Second)},
		id: len(e.gens) + 1, target: []string{registeredA, registeredB}[e.rng.Intn(2)], registered: true}
	if e.rng.Float64() < 0.1 {
		g.target, g.registered = unregisteredTarget, false
		e.res.Faults[FaultUnregisteredTarget]++ // an action, not a failure
	}
	cur := e.current(name)
	same := cur != nil && cur.due.After(now) && e.rng.Float64() < 0.5
	if same {
		g = cur // the app calls again with the same arguments
	} else {
		e.gens = append(e.gens, g)
	}
	err := retry(func() error {
		return e.client.Schedule(e.ctx, name, g.due, g.target, []byte(`{"gen":`+strconv.Itoa(g.id)+`}`))
	})
	e.tracef("schedule %s gen %d at %s for %s: %v", name, g.id, contract.FormatTime(g.due), g.target, err)
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
	return g.key == o.key && g.due.Equal(o.due) && g.target == o.target
}

func (e *events) cancel(name string, race bool) {
	if race {
		e.count(FaultDeadlineRace)
	}
	err := retry(func() error { return e.client.Cancel(e.ctx, name) })
	e.tracef("cancel %s: %v", name, err)
	if err != nil && !injected(err) {
		e.violate(e.lossInv, "Cancel of %s failed without an injected fault: %v", name, err)
	}
}

func (e *events) check() {
	for _, g := range e.gens {
		name := fmt.Sprintf("event %s gen %d", g.name(), g.id)
		for i, at := range g.runs {
			if g.written && g.targets[i] != g.target {
				e.violate(invEventOnce, "%s for %s was delivered to %s", name, g.target, g.targets[i])
			}
			if g.cancelled {
				e.violate(invEventCancelled, "%s was cancelled and delivered at %s", name, contract.FormatTime(at))
			}
			if !g.registered {
				e.violate(invEventRefused, "%s for the unregistered %s was delivered", name, g.target)
			}
		}
		cur, found, err := e.items.Get(e.ctx, g.key)
		ours := err == nil && found && cur.Due.Equal(g.due) && e.current(g.name()) == g
		if !g.registered && ours && cur.Delivered {
			e.violate(invEventRefused, "%s for the unregistered %s is marked delivered", name, g.target)
		}
		e.checkRecord(&g.record, name, g.written && !g.cancelled && g.registered, ours)
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
	return e.effect(g.key, func() {
		g.runs, g.targets = append(g.runs, e.clock.Now()), append(g.targets, target)
		e.tracef("delivered %s gen %d to %s", g.name(), g.id, target)
	})
}

// eventsTable is DynamoDB as the client sees it, on the adopter's table:
// it evaluates the client's two conditions (client.CreateCondition,
// client.CancelCondition) exactly and refuses any other, and injects
// refused calls and lost answers. CancelAlways drops the cancel's
// condition.
type eventsTable struct{ e *events }

var _ client.API = (*eventsTable)(nil)

// eventKey is an event's key in its attributes.
func eventKey(attrs map[string]string) contract.Key {
	return contract.Key{Partition: attrs[futureevent.NameAttr]}
}

func (t *eventsTable) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return t.e.putIfAbsent(in, client.CreateCondition, "#name", futureevent.NameAttr, eventKey, false,
		func(attrs map[string]string) {
			if g := t.e.genOf(attrs[futureevent.PayloadAttr]); g != nil {
				g.written = true
			}
		})
}

func (t *eventsTable) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if err := t.e.tableFault("GetItem"); err != nil {
		return nil, err
	}
	attrs, ok := t.e.items.Attrs(eventKey(dynamo.FromAttrs(in.Key)))
	if !ok {
		return &dynamodb.GetItemOutput{}, nil
	}
	return &dynamodb.GetItemOutput{Item: dynamo.ToAttrs(attrs)}, nil
}

func (t *eventsTable) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	scheduled, _ := in.ExpressionAttributeValues[":scheduled"].(*types.AttributeValueMemberS)
	if aws.ToString(in.ConditionExpression) != client.CancelCondition || in.ExpressionAttributeNames["#status"] != futureevent.StatusAttr || scheduled == nil {
		return nil, fmt.Errorf("dynamodb DeleteItem: unsupported condition %q", aws.ToString(in.ConditionExpression))
	}
	if err := t.e.tableFault("DeleteItem"); err != nil {
		return nil, err
	}
	k := eventKey(dynamo.FromAttrs(in.Key))
	attrs, ok := t.e.items.Attrs(k)
	if !ok || attrs[futureevent.StatusAttr] != scheduled.Value && !t.e.cfg.Mutation.Adopter.CancelAlways {
		return nil, &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
	}
	t.e.items.Delete(k)
	if g := t.e.genOf(attrs[futureevent.PayloadAttr]); g != nil {
		g.cancelled = true
		t.e.res.Faults[FaultEventCancelled]++ // an action, not a failure
	}
	return &dynamodb.DeleteItemOutput{}, t.e.answerLost("DeleteItem")
}
