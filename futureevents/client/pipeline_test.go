package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/contract/pipelinetest"
	"github.com/unschedule/unschedule/futureevents/futureevent"
)

// pipelineAPI is the client's DynamoDB on the core's in-memory pipeline:
// a put or delete is a write to the pipeline's table, which runs its
// stream path (arm, cancel). It evaluates the client's two conditions
// (CreateCondition, CancelCondition) and no others.
type pipelineAPI struct {
	t *testing.T
	p *pipelinetest.Pipeline
}

func (a pipelineAPI) key(k map[string]types.AttributeValue) contract.Key {
	return contract.Key{Partition: k[futureevent.NameAttr].(*types.AttributeValueMemberS).Value}
}

func (a pipelineAPI) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if aws.ToString(in.ConditionExpression) != CreateCondition {
		a.t.Fatalf("PutItem condition %q", aws.ToString(in.ConditionExpression))
	}
	item := map[string]string{}
	for k, v := range in.Item {
		item[k] = v.(*types.AttributeValueMemberS).Value
	}
	if _, ok := a.p.Item(contract.Key{Partition: item[futureevent.NameAttr]}); ok {
		return nil, &types.ConditionalCheckFailedException{}
	}
	a.p.Put(item)
	return &dynamodb.PutItemOutput{}, nil
}

func (a pipelineAPI) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	attrs, _ := a.p.Item(a.key(in.Key))
	out := map[string]types.AttributeValue{}
	for k, v := range attrs {
		out[k] = &types.AttributeValueMemberS{Value: v}
	}
	return &dynamodb.GetItemOutput{Item: out}, nil
}

func (a pipelineAPI) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	if aws.ToString(in.ConditionExpression) != CancelCondition {
		a.t.Fatalf("DeleteItem condition %q", aws.ToString(in.ConditionExpression))
	}
	k := a.key(in.Key)
	if attrs, ok := a.p.Item(k); !ok || attrs[futureevent.StatusAttr] != futureevent.Scheduled {
		return nil, &types.ConditionalCheckFailedException{}
	}
	a.p.Delete(k)
	return &dynamodb.DeleteItemOutput{}, nil
}

// recordingInvoker is the registered targets: it records each invoke.
type recordingInvoker struct{ calls []string }

func (r *recordingInvoker) Invoke(_ context.Context, target string, payload []byte) error {
	r.calls = append(r.calls, target+" "+string(payload))
	return nil
}

type counts map[string]float64

func (c counts) Add(name string, n float64) { c[name] += n }

// TestEventsOnTheCore: on the core's pipeline with its Step Functions
// timer, an event scheduled with the client fires once, at its moment,
// however often it was scheduled; a cancelled one never fires; one whose
// target is not registered is refused, never invoked.
func TestEventsOnTheCore(t *testing.T) {
	const (
		remind = "arn:aws:lambda:us-east-1:123456789012:function:remind"
		other  = "arn:aws:lambda:us-east-1:123456789012:function:other"
	)
	ctx := context.Background()
	inv := &recordingInvoker{}
	m := counts{}
	var d *futureevent.Dispatcher
	p := pipelinetest.New(t, pipelinetest.Config{
		Schema: futureevent.Schema(),
		Timer:  pipelinetest.StepFunctions,
		Target: pipelinetest.LambdaTarget(futureevent.Schema(), func(ctx context.Context, raw json.RawMessage) error {
			return d.Handle(ctx, raw)
		}),
	})
	c, err := New(pipelineAPI{t: t, p: p}, "FutureEvents")
	if err != nil {
		t.Fatal(err)
	}
	c = c.WithClock(p.Now)
	d, err = futureevent.NewDispatcher([]string{remind}, c, inv, slog.New(slog.NewTextHandler(io.Discard, nil)), m)
	if err != nil {
		t.Fatal(err)
	}
	d.Delivered, d.Refused, d.Failed = "Delivered", "Refused", "Failed"

	start := p.Now()
	ann, bob, eve := start.Add(time.Hour), start.Add(2*time.Hour), start.Add(3*time.Hour)
	for _, s := range []struct {
		name, target string
		at           time.Time
	}{{"ann", remind, ann}, {"ann", remind, ann}, {"bob", remind, bob}, {"eve", other, eve}} {
		if err := c.Schedule(ctx, s.name, s.at, s.target, []byte(`{"to":"`+s.name+`"}`)); err != nil {
			t.Fatalf("schedule %s: %v", s.name, err)
		}
	}
	if err := c.Cancel(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	p.Advance(30 * time.Minute)
	if len(inv.calls) != 0 {
		t.Fatalf("fired before the moment: %v", inv.calls)
	}
	p.Advance(4 * time.Hour)

	if want := []string{remind + ` {"to":"ann"}`}; len(inv.calls) != 1 || inv.calls[0] != want[0] {
		t.Fatalf("invokes %v, want %v", inv.calls, want)
	}
	var at time.Time
	for _, call := range p.Calls() {
		if call.Payload.Key.Partition == "ann" {
			at = call.At
		}
		if call.Payload.Key.Partition == "bob" {
			t.Fatal("the cancelled event fired")
		}
	}
	if !at.Equal(ann) {
		t.Fatalf("ann fired at %s, want %s (the Step Functions timer fires to the second)", at, ann)
	}
	if item, _ := p.Item(contract.Key{Partition: "ann"}); item[futureevent.StatusAttr] != futureevent.Fired || item[futureevent.Schema().DeliveredAtAttr] == "" {
		t.Fatalf("ann's item %v: want Fired and delivered", item)
	}
	if m["Delivered"] != 1 || m["Refused"] == 0 {
		t.Fatalf("metrics %v: want one delivery and eve refused", m)
	}
	if item, _ := p.Item(contract.Key{Partition: "eve"}); item[futureevent.Schema().DeliveredAtAttr] != "" {
		t.Fatalf("eve's refused event is marked delivered: %v", item)
	}
	// A fired event cannot be cancelled, and is no duplicate when
	// scheduled again (the moment has passed: that is invalid).
	if err := c.Cancel(ctx, "ann"); err != nil {
		t.Fatal(err)
	}
	if _, status, err := c.Get(ctx, "ann"); err != nil || status != futureevent.Fired {
		t.Fatalf("ann after Cancel: %s %v", status, err)
	}
	if err := c.Schedule(ctx, "ann", ann, remind, []byte(`{"to":"ann"}`)); !errors.Is(err, futureevent.ErrInvalid) {
		t.Fatalf("schedule of a past moment: %v", err)
	}
}

// TestLostExecutionComesBack: an event whose execution was lost (a fault,
// a hand in the console) is armed again by the core's reconciler and
// fires once.
func TestLostExecutionComesBack(t *testing.T) {
	const remind = "arn:aws:lambda:us-east-1:123456789012:function:remind"
	ctx := context.Background()
	inv := &recordingInvoker{}
	var d *futureevent.Dispatcher
	p := pipelinetest.New(t, pipelinetest.Config{
		Schema: futureevent.Schema(), Timer: pipelinetest.StepFunctions,
		Target: pipelinetest.LambdaTarget(futureevent.Schema(), func(ctx context.Context, raw json.RawMessage) error { return d.Handle(ctx, raw) }),
	})
	c, _ := New(pipelineAPI{t: t, p: p}, "FutureEvents")
	c = c.WithClock(p.Now)
	d, _ = futureevent.NewDispatcher([]string{remind}, c, inv, slog.New(slog.NewTextHandler(io.Discard, nil)), counts{})
	if err := c.Schedule(ctx, "zed", p.Now().Add(time.Hour), remind, nil); err != nil {
		t.Fatal(err)
	}
	p.LoseTimer(contract.Key{Partition: "zed"})
	p.Advance(2 * time.Hour)
	if len(inv.calls) != 0 {
		t.Fatalf("fired without an execution: %v", inv.calls)
	}
	p.Reconcile()
	p.Advance(time.Hour)
	if len(inv.calls) != 1 {
		t.Fatalf("invokes %v, want one after the reconciler", inv.calls)
	}
}
