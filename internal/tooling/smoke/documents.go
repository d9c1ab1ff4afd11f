package smoke

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// UserIDAttribute is the message attribute every expiry notification
// carries and the users' filter policies match (notify.FilterPolicy; the
// SNS publisher sets it as awssns.UserIDAttribute).
const UserIDAttribute = "userId"

// Outputs are the stack outputs the smoke test reads (todoapp).
type Outputs struct {
	Region           string
	APIURL           string
	UserPoolID       string
	UserPoolClientID string
	// TopicArns are the notification topics in shard order.
	TopicArns     []string
	TableName     string
	ScheduleGroup string
}

// ParseOutputs reads the stack's outputs (OutputKey to OutputValue). The
// shard topics are named <prefix>-<shard> (constructs/notifications), so
// shard 0's ARN and the shard count give every topic's ARN.
func ParseOutputs(m map[string]string) (Outputs, error) {
	var missing []string
	get := func(k string) string {
		v := m[k]
		if v == "" {
			missing = append(missing, k)
		}
		return v
	}
	o := Outputs{Region: get("Region"), APIURL: get("ApiUrl"), UserPoolID: get("UserPoolId"),
		UserPoolClientID: get("UserPoolClientId"), TableName: get("TableName"), ScheduleGroup: get("ScheduleGroup")}
	topic0, shards := get("NotificationTopicArn"), get("NotificationTopicShards")
	if len(missing) > 0 {
		return o, fmt.Errorf("the stack lacks the outputs %s: deploy this version of the app (make deploy)", strings.Join(missing, ", "))
	}
	n, err := strconv.Atoi(shards)
	if err != nil || n < 1 {
		return o, fmt.Errorf("output NotificationTopicShards is %q, not a positive number", shards)
	}
	prefix, ok := strings.CutSuffix(topic0, "-0")
	if !ok || !strings.HasPrefix(topic0, "arn:") {
		return o, fmt.Errorf("output NotificationTopicArn is %q, not the ARN of shard 0 (<prefix>-0)", topic0)
	}
	for i := range n {
		o.TopicArns = append(o.TopicArns, prefix+"-"+strconv.Itoa(i))
	}
	if !strings.HasSuffix(o.APIURL, "/") {
		o.APIURL += "/"
	}
	return o, nil
}

// QueueArn is the ARN of queue name in the topic's partition, region and
// account (where the smoke test creates it).
func QueueArn(topicArn, name string) (string, error) {
	p := strings.Split(topicArn, ":")
	if len(p) != 6 || p[0] != "arn" || p[2] != "sns" {
		return "", fmt.Errorf("%q is not an SNS topic ARN", topicArn)
	}
	return strings.Join([]string{"arn", p[1], "sqs", p[3], p[4], name}, ":"), nil
}

// QueuePolicy lets the topic, and nothing else, send to the queue: the
// SNS service principal with aws:SourceArn equal to the topic
// (https://docs.aws.amazon.com/sns/latest/dg/subscribe-sqs-queue-to-sns-topic.html).
func QueuePolicy(queueArn, topicArn string) string {
	b, _ := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": []map[string]any{{
		"Sid": "OnlyTheUsersTopic", "Effect": "Allow", "Principal": map[string]string{"Service": "sns.amazonaws.com"},
		"Action": "sqs:SendMessage", "Resource": queueArn,
		"Condition": map[string]map[string]string{"ArnEquals": {"aws:SourceArn": topicArn}},
	}}}) // cannot fail
	return string(b)
}

// Notification is an expiry notification as it reached the queue.
type Notification struct {
	Subject string
	Message string
	UserID  string
	// Published is when SNS accepted the publish (the envelope's
	// Timestamp), so it does not depend on when the queue was read.
	Published time.Time
	// Received is when the smoke test read it.
	Received time.Time
}

// ParseNotification reads the SNS envelope of a message delivered to SQS
// without raw message delivery.
func ParseNotification(body string) (Notification, error) {
	var env struct {
		Type              string
		Subject           string
		Message           string
		Timestamp         string
		MessageAttributes map[string]struct{ Type, Value string }
	}
	if err := json.Unmarshal([]byte(body), &env); err != nil {
		return Notification{}, fmt.Errorf("not an SNS envelope: %w", err)
	}
	if env.Type != "Notification" {
		return Notification{}, fmt.Errorf("SNS envelope of type %q, want Notification", env.Type)
	}
	ts, err := time.Parse(time.RFC3339Nano, env.Timestamp)
	if err != nil {
		return Notification{}, errors.New("the SNS envelope has no valid Timestamp")
	}
	return Notification{Subject: env.Subject, Message: env.Message, UserID: env.MessageAttributes[UserIDAttribute].Value,
		Published: ts}, nil
}
