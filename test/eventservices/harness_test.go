// Package futureevents_test holds the synth-and-assert tests of the
// future-events and deferred-jobs constructs (constructs/futureevents,
// constructs/deferredjobs) and their example apps. One package: jsii
// starts once per process.
package eventservices

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// tpl is a synthesized template as JSON.
type tpl map[string]any

func synth(stack awscdk.Stack) (assertions.Template, tpl) {
	t := assertions.Template_FromStack(stack, nil)
	return t, tpl(*t.ToJSON())
}

func newApp(t testing.TB) awscdk.App {
	return awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir())})
}

// check turns a failed CDK assertion's panic into a test failure.
func check(t testing.TB, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%v", r)
		}
	}()
	f()
}

func (j tpl) resources(typ string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for id, r := range j["Resources"].(map[string]any) {
		if res := r.(map[string]any); res["Type"] == typ {
			out[id] = res
		}
	}
	return out
}

func props(r map[string]any) map[string]any { p, _ := r["Properties"].(map[string]any); return p }

// one is the one resource of typ whose logical id starts with prefix.
func (j tpl) one(t testing.TB, typ, prefix string) (string, map[string]any) {
	t.Helper()
	var ids []string
	for id := range j.resources(typ) {
		if strings.HasPrefix(id, prefix) {
			ids = append(ids, id)
		}
	}
	if len(ids) != 1 {
		t.Fatalf("want one %s with logical id prefix %q, found %v", typ, prefix, ids)
	}
	return ids[0], j.resources(typ)[ids[0]]
}

// roleStatements is every statement of the policies attached to role.
func (j tpl) roleStatements(role string) []map[string]any {
	var out []map[string]any
	for _, pol := range j.resources("AWS::IAM::Policy") {
		p := props(pol)
		for _, r := range p["Roles"].([]any) {
			if ref, _ := r.(map[string]any)["Ref"]; ref == role {
				for _, st := range p["PolicyDocument"].(map[string]any)["Statement"].([]any) {
					out = append(out, st.(map[string]any))
				}
			}
		}
	}
	return out
}

// functionStatements is the statements of the function's execution role.
func (j tpl) functionStatements(t testing.TB, prefix string) []map[string]any {
	t.Helper()
	_, fn := j.one(t, "AWS::Lambda::Function", prefix)
	return j.roleStatements(props(fn)["Role"].(map[string]any)["Fn::GetAtt"].([]any)[0].(string))
}

func actions(st map[string]any) []string {
	switch a := st["Action"].(type) {
	case string:
		return []string{a}
	case []any:
		var out []string
		for _, x := range a {
			out = append(out, x.(string))
		}
		return out
	}
	return nil
}

// actionMap maps each action to the JSON of its resources.
func actionMap(sts []map[string]any) map[string]string {
	m := map[string]string{}
	for _, st := range sts {
		res, _ := json.Marshal(st["Resource"])
		for _, a := range actions(st) {
			if prev, ok := m[a]; ok {
				m[a] = prev + "+" + string(res)
			} else {
				m[a] = string(res)
			}
		}
	}
	return m
}

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

// resolveJoin renders an Fn::Join of strings and tokens, each token as
// its JSON ({"Ref":...}) inside the string, so a definition can be parsed.
func resolveJoin(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Sprint(v)
	}
	j, ok := m["Fn::Join"].([]any)
	if !ok {
		return js(v)
	}
	var b strings.Builder
	for _, p := range j[1].([]any) {
		if s, ok := p.(string); ok {
			b.WriteString(s)
		} else {
			b.WriteString(strings.ReplaceAll(js(p), `"`, `'`))
		}
	}
	return b.String()
}

// cfnLint runs cfn-lint on the template (testenv.CfnLint).
func cfnLint(t *testing.T, j tpl) {
	t.Helper()
	testenv.CfnLint(t, j)
}
