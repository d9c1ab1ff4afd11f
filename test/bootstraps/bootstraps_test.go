// Package bootstraps runs every Lambda bootstrap of lambdas/ as Lambda
// would (built by constructs/gofn's build, for linux, started by the Lambda
// Runtime Interface Emulator) and checks that the AWS SDK's standard
// service-specific endpoint variables reach its clients
// (https://docs.aws.amazon.com/sdkref/latest/guide/feature-ss-endpoints.html):
// with AWS_ENDPOINT_URL_DYNAMODB set, a function's DynamoDB calls go to the
// dynalite this test started, not to the regional endpoint.
package bootstraps

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/tooling/bench"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// endpointVars are the service-specific endpoint variables of every
// client the mains build (AWS_ENDPOINT_URL_ + the service id, upper case).
var endpointVars = []string{"DYNAMODB", "SCHEDULER", "SQS", "SNS", "LAMBDA", "SESV2", "SFN", "SECRETS_MANAGER", "COGNITO_IDENTITY_PROVIDER"}

// A function, the event it is invoked with, and the service (SigV4 signing
// name) that invocation must call: DynamoDB wherever the function reads
// or writes a table on that path, else its own service.
type function struct {
	name, event, service string
}

// fixture is a test event file, relative to the module root.
func fixture(path string) string { return "@" + path }

var functions = []function{
	{"api", `{"httpMethod":"GET","resource":"/tasks","path":"/tasks","requestContext":{"authorizer":{"claims":{"sub":"user-1","email":"a@example.com"}}}}`, "dynamodb"},
	{"campaignapi", `{"httpMethod":"GET","resource":"/campaigns","path":"/campaigns","requestContext":{"authorizer":{"claims":` +
		`{"sub":"user-1","email":"a@example.com","email_verified":"true","cognito:groups":"campaign-senders"}}}}`, "dynamodb"},
	{"campaignbounce", fixture("internal/campaigns/campaignlambda/testdata/bounce.json"), "dynamodb"},
	{"campaignprogress", fixture("internal/campaigns/campaignlambda/testdata/progress_stream.json"), "dynamodb"},
	{"campaignprovision", `{"campaignId":"c-1"}`, "dynamodb"},
	{"campaignreconciler", `{}`, "dynamodb"},
	{"campaignsend", `{"campaignId":"c-1","taskId":"t-1"}`, "dynamodb"},
	// The token is checked with the secret, read on the first request.
	{"campaignunsubscribe", `{"httpMethod":"GET","resource":"/unsubscribe","path":"/unsubscribe","queryStringParameters":{"token":"a.b"}}`, "secretsmanager"},
	{"cancelworker", fixture("lambdas/cancelworker/testdata/batch.json"), "scheduler"},
	// The core's payload of a fired deferred-jobs item: its job is queued.
	{"deferreddispatch", `{"dueAt":"2027-03-01T03:00:00Z","tenantId":"shop-1","window":"2027-03-01T03:00:00Z"}`, "sqs"},
	{"fire", tableschema.Todo().EncodePayload(contract.Payload{Key: contract.Key{Partition: "user-1", Sort: "01JD00000000000000000000AA"},
		Due: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)}), "dynamodb"}, // due: its claim writes the item
	// The core's payload of a future event: its read of the event is the call.
	{"futureevent", `{"name":"renewal-ann-2030","at":"2030-01-01T00:00:00Z"}`, "dynamodb"},
	// The firing function's payload for a task that is not there: its
	// consistent read of the task is the call.
	{"notify", tableschema.Todo().EncodePayload(contract.Payload{Key: contract.Key{Partition: "user-1", Sort: "01JD00000000000000000000AA"},
		Due: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)}), "dynamodb"},
	{"postauth", fixture("lambdas/postauth/testdata/signin.json"), "dynamodb"},
	// A sign-up confirmed with its code: the proof of the address is written.
	{"postconfirmation", fixture("lambdas/postconfirmation/testdata/confirm_signup.json"), "cognito-idp"},
	{"reconciler", fixture("lambdas/reconciler/testdata/scheduled.json"), "dynamodb"},
	// A batch of the to-do table's stream (the schema LambdaEnv sets):
	// its decided transitions are queued.
	{"streamprocessor", fixture("test/bootstraps/testdata/streamprocessor_todo_batch.json"), "sqs"},
	// The to-do app's firing function (its target inside): its claim
	// writes the task, as the expiry function's.
	{"todofire", tableschema.Todo().EncodePayload(contract.Payload{Key: contract.Key{Partition: "user-1", Sort: "01JD00000000000000000000AA"},
		Due: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)}), "dynamodb"},
	{"ttlwatch", `{}`, "dynamodb"},
}

// presignup calls no AWS API (it does not link the SDK).
var noAWS = []string{"presignup"}

func TestEveryBootstrapHonoursTheServiceEndpointVariables(t *testing.T) {
	start := time.Now()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	rie, err := installRIE(goBin, root)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the Lambda Runtime Interface Emulator is required with CI=true: %v", err)
		}
		t.Skipf("no Lambda Runtime Interface Emulator in bin/ and it could not be installed (%v)", err)
	}
	checkEveryMainIsCovered(t, root)
	bins := buildBootstraps(t, goBin, root)
	rec := startRecorder(t, testenv.StartDynalite(t))

	t.Run("functions", func(t *testing.T) {
		for _, fn := range functions {
			t.Run(fn.name, func(t *testing.T) {
				t.Parallel()
				event := fn.event
				if path, ok := strings.CutPrefix(event, "@"); ok {
					b, err := os.ReadFile(filepath.Join(root, path))
					if err != nil {
						t.Fatal(err)
					}
					event = string(b)
				}
				env := bench.LambdaEnv(fn.name, 128)
				env = slices.DeleteFunc(env, func(kv string) bool {
					return strings.HasPrefix(kv, "AWS_ACCESS_KEY_ID=") || strings.HasPrefix(kv, "AWS_LAMBDA_FUNCTION_TIMEOUT=")
				})
				// The access key names the function in each request's
				// SigV4 credential, so the recorder knows who called. The
				// timeout is the longest Lambda allows: the reconcilers and
				// the progress function stop a margin before their deadline.
				env = append(env, "AWS_ACCESS_KEY_ID="+accessKey(fn.name), "AWS_MAX_ATTEMPTS=1", "AWS_LAMBDA_FUNCTION_TIMEOUT=900")
				for _, s := range endpointVars {
					env = append(env, "AWS_ENDPOINT_URL_"+s+"="+rec.url)
				}
				out := invokeOnce(t, rie, filepath.Join(bins, fn.name), env, event)
				if got := rec.calls(fn.name); !slices.Contains(got, fn.service) {
					t.Errorf("%s called %v through the recorder, want %s; emulator output:\n%s", fn.name, got, fn.service, out)
				}
			})
		}
	})
	t.Logf("wall time %s", time.Since(start).Round(time.Millisecond))
}

// checkEveryMainIsCovered fails when a lambdas/* main is neither invoked
// here nor known to make no AWS call.
func checkEveryMainIsCovered(t *testing.T, root string) {
	t.Helper()
	dirs, err := os.ReadDir(filepath.Join(root, gofn.BatchDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() || slices.Contains(noAWS, d.Name()) {
			continue
		}
		if !slices.ContainsFunc(functions, func(f function) bool { return f.name == d.Name() }) {
			t.Errorf("lambdas/%s is not invoked by this test: add it to functions", d.Name())
		}
	}
}

// buildBootstraps builds every main under lambdas/ in one go build, with
// gofn.Build's flags and environment (the deployed bootstrap's), for
// linux on this machine's architecture so the emulator can run it.
func buildBootstraps(t *testing.T, goBin, root string) string {
	t.Helper()
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "go-host")
	script := fmt.Sprintf("#!/bin/sh\nGOARCH=%s exec %q \"$@\"\n", runtime.GOARCH, goBin)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "bin") + string(filepath.Separator)
	if err := gofn.Build(wrapper, root, gofn.BatchDir+"/...", out); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "bin")
}

func accessKey(function string) string { return "AKIA" + strings.ToUpper(function) }

// credential reads the access key and the signing name of a SigV4
// Authorization header.
var credential = regexp.MustCompile(`Credential=([^/]+)/[^/]+/[^/]+/([^/]+)/aws4_request`)

// recorder is an HTTP endpoint that notes which function called which
// service; DynamoDB requests are passed on to dynalite, others answered
// with an error (no retry: AWS_MAX_ATTEMPTS=1).
type recorder struct {
	url  string
	mu   sync.Mutex
	seen map[string][]string // access key -> signing names
}

func startRecorder(t *testing.T, dynalite string) *recorder {
	t.Helper()
	target, err := url.Parse(dynalite)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	r := &recorder{seen: map[string][]string{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		m := credential.FindStringSubmatch(req.Header.Get("Authorization"))
		if m == nil {
			http.Error(w, "unsigned request", http.StatusForbidden)
			return
		}
		r.mu.Lock()
		r.seen[m[1]] = append(r.seen[m[1]], m[2])
		r.mu.Unlock()
		if m[2] == "dynamodb" {
			proxy.ServeHTTP(w, req)
			return
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"ValidationException","message":"recorded by the bootstraps test"}`)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

func (r *recorder) calls(function string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen[accessKey(function)])
}

// invokeOnce starts the emulator on the bootstrap with env, invokes it
// once with event, waits for the answer, and returns the emulator's output
// (the function's logs).
func invokeOnce(t *testing.T, rie, bootstrap string, env []string, event string) string {
	t.Helper()
	// A fresh emulator once more when the first one's connection was
	// reset or refused before it answered: on a loaded machine a parallel
	// test may take a port freePorts picked (it closes before RIE binds).
	// A function's own failure is an answer, and is never retried.
	for attempt := 1; ; attempt++ {
		emu, err := startEmulator(rie, bootstrap, env, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		body, err := emu.invoke(event, 30*time.Second)
		emu.stop()
		if err != nil && attempt < 2 && (errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED)) {
			t.Logf("attempt %d: %v; starting a fresh emulator", attempt, err)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		return emu.out.String() + "\nresponse: " + string(body)
	}
}
