package smoke

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/todo/notify"
)

func TestParseOutputs(t *testing.T) {
	good := func() map[string]string { return newWorld().outputs }
	for _, tc := range []struct {
		name    string
		change  func(m map[string]string)
		want    []string // topic ARNs
		wantErr string
	}{
		{"two shards", func(map[string]string) {}, []string{testTopic0,
			"arn:aws:sns:eu-west-1:123456789012:Unschedule-dev-notify-1"}, ""},
		{"one shard", func(m map[string]string) { m["NotificationTopicShards"] = "1" }, []string{testTopic0}, ""},
		{"missing outputs are named", func(m map[string]string) { delete(m, "ScheduleGroup"); delete(m, "ApiUrl") }, nil,
			"the stack lacks the outputs ApiUrl, ScheduleGroup"},
		{"bad shard count", func(m map[string]string) { m["NotificationTopicShards"] = "0" }, nil, "not a positive number"},
		{"not shard 0", func(m map[string]string) { m["NotificationTopicArn"] = "arn:aws:sns:eu-west-1:1:topic-1" }, nil, "not the ARN of shard 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := good()
			tc.change(m)
			o, err := ParseOutputs(m)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(o.TopicArns, tc.want) || o.APIURL != "https://api.example/prod/" || o.ScheduleGroup != "group" {
				t.Fatalf("%+v %v", o, err)
			}
		})
	}
}

func TestQueueArn(t *testing.T) {
	for _, tc := range []struct{ topic, want string }{
		{testTopic0, "arn:aws:sqs:eu-west-1:123456789012:q"},
		{"arn:aws-cn:sns:cn-north-1:123456789012:t-0", "arn:aws-cn:sqs:cn-north-1:123456789012:q"},
		{"arn:aws:sqs:eu-west-1:123456789012:t-0", ""},
		{"not an arn", ""},
	} {
		got, err := QueueArn(tc.topic, "q")
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("QueueArn(%q) = %q, %v; want %q", tc.topic, got, err, tc.want)
		}
	}
}

// TestQueuePolicy: only SNS, only for that topic, only SendMessage, only
// on that queue.
func TestQueuePolicy(t *testing.T) {
	queue := "arn:aws:sqs:eu-west-1:123456789012:q"
	var doc map[string]any
	if err := json.Unmarshal([]byte(QueuePolicy(queue, testTopic0)), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
		"Sid": "OnlyTheUsersTopic", "Effect": "Allow", "Principal": map[string]any{"Service": "sns.amazonaws.com"},
		"Action": "sqs:SendMessage", "Resource": queue,
		"Condition": map[string]any{"ArnEquals": map[string]any{"aws:SourceArn": testTopic0}},
	}}}
	if !reflect.DeepEqual(doc, want) {
		t.Fatalf("policy %v\nwant %v", doc, want)
	}
}

func TestFilterPolicy(t *testing.T) {
	for _, sub := range []string{"0f1e2d3c-aaaa-4bbb-8ccc-123456789abc", `we"ird`} {
		var doc map[string][]string
		if err := json.Unmarshal([]byte(notify.FilterPolicy(sub)), &doc); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(doc, map[string][]string{UserIDAttribute: {sub}}) {
			t.Fatalf("filter policy %v", doc)
		}
	}
}

func TestParseNotification(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       Notification
		wantErr    bool
	}{
		{"envelope", `{"Type":"Notification","Subject":"Task expired: x","Message":"m","Timestamp":"2030-01-01T12:02:01.123Z",
			"MessageAttributes":{"userId":{"Type":"String","Value":"sub-1"}}}`,
			Notification{Subject: "Task expired: x", Message: "m", UserID: "sub-1", Published: time.Date(2030, 1, 1, 12, 2, 1, 123e6, time.UTC)}, false},
		{"no attribute", `{"Type":"Notification","Subject":"s","Timestamp":"2030-01-01T12:02:01Z"}`,
			Notification{Subject: "s", Published: time.Date(2030, 1, 1, 12, 2, 1, 0, time.UTC)}, false},
		{"raw message", `Your task "x" reached its deadline`, Notification{}, true},
		{"subscription confirmation", `{"Type":"SubscriptionConfirmation","Timestamp":"2030-01-01T12:02:01Z"}`, Notification{}, true},
		{"no timestamp", `{"Type":"Notification"}`, Notification{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseNotification(tc.body)
			if (err != nil) != tc.wantErr || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("%+v %v, want %+v", got, err, tc.want)
			}
		})
	}
}

func TestHTTPTasks(t *testing.T) {
	type seen struct{ method, path, auth, body string }
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, seen{r.Method, r.URL.Path, r.Header.Get("Authorization"), string(b)})
		switch r.Method {
		case "POST":
			w.WriteHeader(201)
			_, _ = w.Write([]byte(`{"id":"T1","title":"t","status":"Pending","dueAt":"2030-01-01T12:02:00Z"}`))
		case "DELETE":
			w.WriteHeader(204)
		case "PATCH":
			w.WriteHeader(409)
			_, _ = w.Write([]byte(`{"error":"conflict","message":"the task is expired"}`))
		default:
			_, _ = w.Write([]byte(`{"id":"T1","status":"Expired","dueAt":"2030-01-01T12:02:00Z"}`))
		}
	}))
	defer srv.Close()
	api := &HTTPTasks{BaseURL: srv.URL + "/prod/", Token: "tok"}
	ctx := context.Background()
	due := time.Date(2030, 1, 1, 12, 2, 0, 0, time.UTC)
	created, err := api.Create(ctx, "t", due)
	if d, _ := created.Due(); err != nil || created.ID != "T1" || !d.Equal(due) {
		t.Fatalf("create: %+v %v", created, err)
	}
	if task, err := api.Get(ctx, "T1"); err != nil || task.Status != "Expired" {
		t.Fatalf("get: %+v %v", task, err)
	}
	if _, err := api.Update(ctx, "T1", map[string]string{"status": "done"}); err == nil || !strings.Contains(err.Error(), "HTTP 409, want 200") ||
		!strings.Contains(err.Error(), "the task is expired") {
		t.Fatalf("update: %v", err)
	}
	if err := api.Delete(ctx, "T1"); err != nil {
		t.Fatal(err)
	}
	want := []seen{
		{"POST", "/prod/tasks", "tok", `{"dueAt":"2030-01-01T12:02:00Z","title":"t"}`},
		{"GET", "/prod/tasks/T1", "tok", ""},
		{"PATCH", "/prod/tasks/T1", "tok", `{"status":"done"}`},
		{"DELETE", "/prod/tasks/T1", "tok", ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("requests %+v\nwant %+v", got, want)
	}
}

// TestCLI runs a stand-in CDK CLI that records its arguments and fails a
// destroy: each command's arguments, run in the folder, and a failure
// naming the command line.
func TestCLI(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "cdk")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s|' \"$@\" > args.txt\n[ \"$5\" = deploy ]\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cli       CLI
		cmd, want string
	}{
		{CLI{Env: "dev"}, "deploy", `--app|go run .|-c|env=dev|deploy|Unschedule-dev|--require-approval|broadening|--tags|unschedule:smoke-run=run1|`},
		{CLI{Env: "prod", RequireApproval: "never"}, "deploy", `--app|go run .|-c|env=prod|deploy|Unschedule-dev|--require-approval|never|`},
		{CLI{Env: "dev"}, "destroy", `--app|go run .|-c|env=dev|destroy|Unschedule-dev|--force|`},
	} {
		tags := map[string]string{RunTag: "run1"}
		if tc.cli.Env == "prod" {
			tags = nil // an existing stack: no tags
		}
		c := tc.cli
		c.Command, c.Dir = script, dir
		err := c.Deploy(context.Background(), "Unschedule-dev", tags)
		if tc.cmd == "destroy" {
			err = c.Destroy(context.Background(), "Unschedule-dev")
			if err == nil || !strings.Contains(err.Error(), "destroy Unschedule-dev --force") {
				t.Errorf("destroy: err %v, want the failed command line", err)
			}
		} else if err != nil {
			t.Error(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "args.txt")); string(b) != tc.want {
			t.Errorf("%s: %s, want %s", tc.cmd, b, tc.want)
		}
	}
}

func TestRetained(t *testing.T) {
	cdkJSON := []byte(`{"context":{"environments":{"dev":{"removalPolicy":"destroy"},"prod":{"removalPolicy":"retain"},"stage":{}}}}`)
	for _, tc := range []struct {
		env      string
		retained bool
		err      string
	}{
		{"dev", false, ""},
		{"prod", true, ""},
		{"stage", true, ""}, // the app's default is retain
		{"qa", false, `unknown environment "qa": cdk.json defines dev, prod, stage`},
	} {
		t.Run(tc.env, func(t *testing.T) {
			got, err := Retained(cdkJSON, tc.env)
			if got != tc.retained || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("%v %v, want %v %q", got, err, tc.retained, tc.err)
			}
		})
	}
}
