// Package snsfake is an in-memory model of the SNS calls this project
// makes, for tests of the adapters and the triggers. It models the
// behaviour the notification rules depend on:
//   - one subscription per topic, protocol and endpoint;
//   - Subscribe is idempotent for the same attributes (it returns the
//     existing subscription) and refused with InvalidParameter for others;
//     subscribing an endpoint that awaits confirmation sends the
//     confirmation email again;
//   - email subscriptions are PendingConfirmation until Confirm;
//   - Unsubscribe deletes a confirmed subscription, and refuses one that
//     awaits confirmation (the SNS developer guide: "You can't delete a
//     subscription that's pending confirmation"); OptOut deletes one as
//     the unsubscribe link of an email does, Lapse as SNS does to an
//     unconfirmed one after 48 hours;
//   - at most FilterPolicyLimit subscriptions with a filter policy per
//     topic (FilterPolicyLimitExceeded beyond);
//   - Publish delivers to every confirmed subscription whose filter policy
//     matches the message attributes (exact string values only).
package snsfake

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"
)

// DefaultFilterPolicyLimit is SNS's default quota of filter policies per topic.
const DefaultFilterPolicyLimit = 200

// Delivery is one message delivered to one subscription.
type Delivery struct {
	TopicArn string
	Endpoint string
	Subject  string
	Message  string
}

// Subscription is one subscription (Subscriptions, and make dev's saved
// state: the JSON names are that file's).
type Subscription struct {
	Arn        string
	TopicArn   string `json:"Topic"`
	Protocol   string
	Endpoint   string
	Attributes map[string]string `json:"Attrs"`
	Confirmed  bool
}

// SNS is the fake. Use New.
type SNS struct {
	mu     sync.Mutex
	topics map[string][]*Subscription
	seq    int
	// FilterPolicyLimit is the per-topic quota of filter policies.
	FilterPolicyLimit int
	// Fail, when set, is called first by every operation with its name
	// ("Subscribe", "Publish", ...); a non-nil error is returned instead.
	Fail func(op string) error

	calls         map[string]int
	confirmations map[string]int // by endpoint
	deliveries    []Delivery
}

// New returns a fake SNS with the given topics and SNS's defaults.
func New(topicArns ...string) *SNS {
	f := &SNS{topics: map[string][]*Subscription{}, FilterPolicyLimit: DefaultFilterPolicyLimit,
		calls: map[string]int{}, confirmations: map[string]int{}}
	for _, t := range topicArns {
		f.topics[t] = nil
	}
	return f
}

// AddTopic adds a topic (a new shard).
func (f *SNS) AddTopic(topicArn string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.topics[topicArn]; !ok {
		f.topics[topicArn] = nil
	}
}

func (f *SNS) begin(op string) error {
	f.calls[op]++
	if f.Fail != nil {
		return f.Fail(op)
	}
	return nil
}

// onTopic begins op on topic: its subscriptions, or SNS's NotFound when
// there is no such topic. Call it with f.mu held.
func (f *SNS) onTopic(op, topic string) ([]*Subscription, error) {
	if err := f.begin(op); err != nil {
		return nil, err
	}
	subs, ok := f.topics[topic]
	if !ok {
		return nil, notFound("topic " + topic)
	}
	return subs, nil
}

func notFound(what string) error {
	return &types.NotFoundException{Message: aws.String(what + " does not exist")}
}

func (f *SNS) policies(topic string) int {
	n := 0
	for _, s := range f.topics[topic] {
		if s.Attributes["FilterPolicy"] != "" {
			n++
		}
	}
	return n
}

// Subscribe models sns:Subscribe.
func (f *SNS) Subscribe(_ context.Context, in *sns.SubscribeInput, _ ...func(*sns.Options)) (*sns.SubscribeOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	topic := aws.ToString(in.TopicArn)
	subs, err := f.onTopic("Subscribe", topic)
	if err != nil {
		return nil, err
	}
	for _, s := range subs {
		if s.Protocol != aws.ToString(in.Protocol) || s.Endpoint != aws.ToString(in.Endpoint) {
			continue
		}
		if !maps.Equal(s.Attributes, in.Attributes) {
			return nil, &types.InvalidParameterException{Message: aws.String("Invalid parameter: Attributes Reason: Subscription already exists with different attributes")}
		}
		if !s.Confirmed {
			f.confirmations[s.Endpoint]++
		}
		return &sns.SubscribeOutput{SubscriptionArn: aws.String(f.shownArn(s, in.ReturnSubscriptionArn))}, nil
	}
	if in.Attributes["FilterPolicy"] != "" && f.policies(topic) >= f.FilterPolicyLimit {
		return nil, &types.FilterPolicyLimitExceededException{Message: aws.String("Filter policy limit exceeded")}
	}
	f.seq++
	s := &Subscription{Arn: topic + ":" + strconv.Itoa(f.seq), TopicArn: topic, Protocol: aws.ToString(in.Protocol),
		Endpoint: aws.ToString(in.Endpoint), Attributes: maps.Clone(in.Attributes)}
	f.topics[topic] = append(subs, s)
	f.confirmations[s.Endpoint]++
	return &sns.SubscribeOutput{SubscriptionArn: aws.String(f.shownArn(s, in.ReturnSubscriptionArn))}, nil
}

func (f *SNS) shownArn(s *Subscription, always bool) string {
	if s.Confirmed || always {
		return s.Arn
	}
	return "pending confirmation"
}

// onSub begins op on the subscription arn, or SNS's NotFound when there
// is none. Call it with f.mu held.
func (f *SNS) onSub(op string, arn *string) (*Subscription, error) {
	if err := f.begin(op); err != nil {
		return nil, err
	}
	for _, subs := range f.topics {
		for _, s := range subs {
			if s.Arn == aws.ToString(arn) {
				return s, nil
			}
		}
	}
	return nil, notFound("subscription " + aws.ToString(arn))
}

// GetSubscriptionAttributes models sns:GetSubscriptionAttributes.
func (f *SNS) GetSubscriptionAttributes(_ context.Context, in *sns.GetSubscriptionAttributesInput, _ ...func(*sns.Options)) (*sns.GetSubscriptionAttributesOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.onSub("GetSubscriptionAttributes", in.SubscriptionArn)
	if err != nil {
		return nil, err
	}
	attrs := maps.Clone(s.Attributes)
	if attrs == nil {
		attrs = map[string]string{}
	}
	attrs["SubscriptionArn"] = s.Arn
	attrs["TopicArn"] = s.TopicArn
	attrs["Endpoint"] = s.Endpoint
	attrs["PendingConfirmation"] = strconv.FormatBool(!s.Confirmed)
	return &sns.GetSubscriptionAttributesOutput{Attributes: attrs}, nil
}

// Unsubscribe models sns:Unsubscribe.
func (f *SNS) Unsubscribe(_ context.Context, in *sns.UnsubscribeInput, _ ...func(*sns.Options)) (*sns.UnsubscribeOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.onSub("Unsubscribe", in.SubscriptionArn)
	if err != nil {
		return nil, err
	}
	if !s.Confirmed {
		return nil, &types.InvalidParameterException{Message: aws.String("Invalid parameter: a subscription pending confirmation cannot be deleted")}
	}
	f.remove(s)
	return &sns.UnsubscribeOutput{}, nil
}

func (f *SNS) remove(gone *Subscription) {
	subs := f.topics[gone.TopicArn]
	for i, s := range subs {
		if s == gone {
			f.topics[gone.TopicArn] = append(subs[:i:i], subs[i+1:]...)
			return
		}
	}
}

// OptOut deletes the endpoint's subscription on topic, as a click on the
// unsubscribe link of one of its emails does.
func (f *SNS) OptOut(topicArn, endpoint string) error {
	return f.drop(topicArn, endpoint, true)
}

// Lapse deletes the endpoint's unconfirmed subscription on topic, as SNS
// does 48 hours after the subscribe.
func (f *SNS) Lapse(topicArn, endpoint string) error {
	return f.drop(topicArn, endpoint, false)
}

func (f *SNS) drop(topicArn, endpoint string, confirmed bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.topics[topicArn] {
		if s.Endpoint == endpoint && s.Confirmed == confirmed {
			f.remove(s)
			return nil
		}
	}
	return notFound("subscription of " + endpoint + " on " + topicArn)
}

// Publish models sns:Publish.
func (f *SNS) Publish(_ context.Context, in *sns.PublishInput, _ ...func(*sns.Options)) (*sns.PublishOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	topic := aws.ToString(in.TopicArn)
	subs, err := f.onTopic("Publish", topic)
	if err != nil {
		return nil, err
	}
	for _, s := range subs {
		if s.Confirmed && matches(s.Attributes["FilterPolicy"], in.MessageAttributes) {
			f.deliveries = append(f.deliveries, Delivery{TopicArn: topic, Endpoint: s.Endpoint,
				Subject: aws.ToString(in.Subject), Message: aws.ToString(in.Message)})
		}
	}
	f.seq++
	return &sns.PublishOutput{MessageId: aws.String(fmt.Sprintf("msg-%d", f.seq))}, nil
}

// matches applies a filter policy of exact string values; no policy
// matches everything, and a policy it cannot read matches nothing.
func matches(policy string, attrs map[string]types.MessageAttributeValue) bool {
	if policy == "" {
		return true
	}
	var p map[string][]any
	if json.Unmarshal([]byte(policy), &p) != nil {
		return false
	}
	for key, allowed := range p {
		a, ok := attrs[key]
		if !ok || aws.ToString(a.DataType) != "String" {
			return false
		}
		hit := false
		for _, v := range allowed {
			hit = hit || v == aws.ToString(a.StringValue)
		}
		if !hit {
			return false
		}
	}
	return true
}

// Confirm marks the endpoint's subscription on topic confirmed, as its
// owner's click on the confirmation link does.
func (f *SNS) Confirm(topicArn, endpoint string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.topics[topicArn] {
		if s.Endpoint == endpoint {
			s.Confirmed = true
			return nil
		}
	}
	return notFound("subscription of " + endpoint + " on " + topicArn)
}

// ConfirmAll confirms every subscription.
func (f *SNS) ConfirmAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, subs := range f.topics {
		for _, s := range subs {
			s.Confirmed = true
		}
	}
}

// Subscriptions lists the subscriptions of an endpoint on every topic.
func (f *SNS) Subscriptions(endpoint string) []Subscription {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Subscription
	for _, subs := range f.topics {
		for _, s := range subs {
			if s.Endpoint == endpoint {
				c := *s
				c.Attributes = maps.Clone(s.Attributes)
				out = append(out, c)
			}
		}
	}
	return out
}

// Seed adds a subscription as is (test setup), confirmed or not, and
// returns its ARN. No confirmation email is counted.
func (f *SNS) Seed(topicArn, protocol, endpoint string, attrs map[string]string, confirmed bool) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	s := &Subscription{Arn: topicArn + ":" + strconv.Itoa(f.seq), TopicArn: topicArn, Protocol: protocol, Endpoint: endpoint,
		Attributes: maps.Clone(attrs), Confirmed: confirmed}
	f.topics[topicArn] = append(f.topics[topicArn], s)
	return s.Arn
}

// Calls counts the calls made of an operation.
func (f *SNS) Calls(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

// ConfirmationEmails counts the confirmation emails sent to an endpoint.
func (f *SNS) ConfirmationEmails(endpoint string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.confirmations[endpoint]
}

// Deliveries returns every message delivered so far.
func (f *SNS) Deliveries() []Delivery {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Delivery(nil), f.deliveries...)
}

// saved is the fake as MarshalJSON writes it.
type saved struct {
	Seq  int
	Subs []*Subscription
}

// MarshalJSON writes the subscriptions (make dev's saved state).
func (f *SNS) MarshalJSON() ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := saved{Seq: f.seq, Subs: []*Subscription{}}
	for _, topic := range slices.Sorted(maps.Keys(f.topics)) {
		out.Subs = append(out.Subs, f.topics[topic]...)
	}
	return json.Marshal(out)
}

// UnmarshalJSON adds the subscriptions MarshalJSON wrote.
func (f *SNS) UnmarshalJSON(b []byte) error {
	var in saved
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq = max(f.seq, in.Seq)
	for _, s := range in.Subs {
		f.topics[s.TopicArn] = append(f.topics[s.TopicArn], s)
	}
	return nil
}
