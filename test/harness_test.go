// Package test holds the synth-and-assert tests of the composed app. They
// are one package so the jsii runtime starts once per `go test` process;
// each stack is synthesized once per test binary and shared by its tests
// (Stack, timerStack and webHosting memoise by the name of their props).
package test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/todoapp"
)

// cdkContext is cdk.json's context: feature flags and environments.
func cdkContext(t testing.TB) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "cdk.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Context
}

// NewApp returns an app with cdk.json's context, writing to a temp dir.
func NewApp(t testing.TB, extra map[string]any) awscdk.App {
	t.Helper()
	ctx := cdkContext(t)
	for k, v := range extra {
		ctx[k] = v
	}
	return awscdk.NewApp(&awscdk.AppProps{Context: &ctx, Outdir: jsii.String(t.TempDir())})
}

// EnvConfig is environment name's config from cdk.json.
func EnvConfig(t testing.TB, name string) todoapp.Config {
	t.Helper()
	cfg, err := todoapp.ConfigFromContext(cdkContext(t)["environments"], name)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

type synthed struct {
	stack *todoapp.TodoStack
	tpl   assertions.Template
	json  map[string]any
	// nested holds the nested stacks' templates by construct path, and
	// warnings every warning annotation ("path: message"), read while the
	// assembly is on disk (it lives in the first caller's temp dir).
	nested   map[string]map[string]any
	warnings []string
	// nag: the unsuppressed AwsSolutions findings (NagFindings), for the
	// stacks synthesized with the checks app.go applies.
	nag []string
}

// synths memoises synthesized stacks by a key naming the stack and its
// props: a stack is synthesized once per test binary, and every test that
// asks for the same key shares the template. A failed synthesis is not
// kept: the next test tries again and reports its own failure.
var synths = struct {
	sync.Mutex
	m map[string]*synthed
}{m: map[string]*synthed{}}

// shared returns the synthesized stack of key, running synth the first
// time.
func shared(t testing.TB, key string, synth func() *synthed) *synthed {
	t.Helper()
	synths.Lock()
	defer synths.Unlock()
	if s, ok := synths.m[key]; ok {
		return s
	}
	s := synth()
	if s != nil && !t.Failed() {
		synths.m[key] = s
	}
	return s
}

// Stack synthesizes environment name's stack, as app.go builds it (its
// config from cdk.json, the AwsSolutions checks), once per test binary.
func Stack(t testing.TB, name string) *synthed {
	t.Helper()
	return shared(t, "todo stack "+name, func() *synthed { return synthTodoStack(t, name) })
}

func synthTodoStack(t testing.TB, name string) *synthed {
	t.Helper()
	var s *synthed
	Check(t, func() {
		app := NewApp(t, nil)
		st := todoapp.NewTodoStack(app, "Unschedule-"+name, &todoapp.TodoStackProps{Config: EnvConfig(t, name), WebPlaceholderIfMissing: true})
		todoapp.AddChecks(app) // exactly what app.go applies
		tpl := assertions.Template_FromStack(st.Stack, nil)
		s = &synthed{stack: st, tpl: tpl, json: *tpl.ToJSON(), nested: map[string]map[string]any{}}
		for _, c := range *st.Node().FindAll(constructs.ConstructOrder_PREORDER) {
			if *awscdk.NestedStack_IsNestedStack(c) {
				s.nested[*c.Node().Path()] = *assertions.Template_FromStack(awscdk.Stack_Of(c), nil).ToJSON()
			}
		}
		for _, m := range *assertions.Annotations_FromStack(st.Stack).FindWarning(jsii.String("*"), assertions.Match_AnyValue()) {
			//lint:ignore SA1019 Annotations returns this type; the Go binding has no other
			s.warnings = append(s.warnings, fmt.Sprintf("%s: %v", *m.Id, m.Entry.Data))
		}
		s.nag = NagFindings(st.Stack)
	})
	return s
}

// Check runs an assertion and turns the panic that a failed CDK assertion
// raises into a test failure with its message.
func Check(t testing.TB, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%v", r)
		}
	}()
	f()
}

// Resources returns the template's resources of one type, by logical id.
func (s *synthed) Resources(typ string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for id, r := range s.json["Resources"].(map[string]any) {
		res := r.(map[string]any)
		if res["Type"] == typ {
			out[id] = res
		}
	}
	return out
}

// Props returns a resource's Properties.
func Props(r map[string]any) map[string]any {
	p, _ := r["Properties"].(map[string]any)
	return p
}

// JSON renders v for failure messages.
func JSON(v any) string {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// LogicalID finds the one resource of typ whose logical id starts with
// prefix (CDK ids are the construct path without separators plus a hash).
func (s *synthed) LogicalID(t testing.TB, typ, prefix string) string {
	t.Helper()
	var found []string
	for id := range s.Resources(typ) {
		if len(id) >= len(prefix) && id[:len(prefix)] == prefix {
			found = append(found, id)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one %s with logical id prefix %q, found %v", typ, prefix, found)
	}
	return found[0]
}

// RoleStatements returns every IAM statement attached (through
// AWS::IAM::Policy resources) to the role with logical id roleID.
func (s *synthed) RoleStatements(roleID string) []map[string]any {
	var out []map[string]any
	for _, pol := range s.Resources("AWS::IAM::Policy") {
		p := Props(pol)
		attached := false
		for _, r := range p["Roles"].([]any) {
			if ref, ok := r.(map[string]any)["Ref"]; ok && ref == roleID {
				attached = true
			}
		}
		if !attached {
			continue
		}
		for _, st := range p["PolicyDocument"].(map[string]any)["Statement"].([]any) {
			out = append(out, st.(map[string]any))
		}
	}
	return out
}

// FunctionStatements returns the IAM statements of the function whose
// logical id starts with prefix.
func (s *synthed) FunctionStatements(t testing.TB, prefix string) []map[string]any {
	t.Helper()
	fn := s.Resources("AWS::Lambda::Function")[s.LogicalID(t, "AWS::Lambda::Function", prefix)]
	role := Props(fn)["Role"].(map[string]any)["Fn::GetAtt"].([]any)[0].(string)
	return s.RoleStatements(role)
}

// Actions flattens a statement's Action (string or list).
func Actions(st map[string]any) []string {
	switch a := st["Action"].(type) {
	case string:
		return []string{a}
	case []any:
		out := make([]string, len(a))
		for i, x := range a {
			out[i] = x.(string)
		}
		return out
	}
	return nil
}

// ActionMap maps each action of the statements to the JSON of its
// resource(s), for exact least-privilege comparisons.
func ActionMap(sts []map[string]any) map[string]string {
	m := map[string]string{}
	for _, st := range sts {
		res, _ := json.Marshal(st["Resource"])
		for _, a := range Actions(st) {
			if prev, ok := m[a]; ok {
				m[a] = prev + "+" + string(res)
			} else {
				m[a] = string(res)
			}
		}
	}
	return m
}

// NagFindings lists the unsuppressed AwsSolutions errors and warnings on
// stack (synthesizing it), one line each.
func NagFindings(stack awscdk.Stack) []string {
	ann := assertions.Annotations_FromStack(stack)
	rule := assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*"))
	var out []string
	for _, m := range append(*ann.FindError(jsii.String("*"), rule), *ann.FindWarning(jsii.String("*"), rule)...) {
		//lint:ignore SA1019 Annotations returns this type; the Go binding has no other
		out = append(out, fmt.Sprintf("%s: %v", *m.Id, m.Entry.Data))
	}
	return out
}

// WantPanic fails unless f panics with a message that holds every want.
func WantPanic(t *testing.T, f func(), want ...string) {
	t.Helper()
	var got string
	func() {
		defer func() {
			if r := recover(); r != nil {
				got = fmt.Sprint(r)
			}
		}()
		f()
	}()
	if got == "" {
		t.Fatal("no panic")
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("panic %q lacks %q", got, w)
		}
	}
}
