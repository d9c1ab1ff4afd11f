package lambdaenv

import (
	"reflect"
	"strings"
	"testing"

	"github.com/unschedule/unschedule/contract"
)

func TestEnv(t *testing.T) {
	vars := map[string]string{"A": "x", "N": "3", "F": "3.0", "BAD": "3.5", "BIG": "99", "L": " a, ,b "}
	for _, tc := range []struct {
		name    string
		read    func(e *Env) any
		want    any
		wantErr string
	}{
		{"require set", func(e *Env) any { return e.Require("A") }, "x", ""},
		{"require missing", func(e *Env) any { return e.Require("MISSING") }, "", "MISSING is not set"},
		{"optional default", func(e *Env) any { return e.Optional("MISSING", "d") }, "d", ""},
		{"int", func(e *Env) any { return e.Int("N", 1, 0, 10) }, 3, ""},
		{"int from cdk float", func(e *Env) any { return e.Int("F", 1, 0, 10) }, 3, ""},
		{"int default", func(e *Env) any { return e.Int("MISSING", 7, 0, 10) }, 7, ""},
		{"int fraction", func(e *Env) any { return e.Int("BAD", 1, 0, 10) }, 1, "BAD must be a whole number"},
		{"int range", func(e *Env) any { return e.Int("BIG", 1, 0, 10) }, 1, "from 0 to 10"},
		{"float", func(e *Env) any { return e.Float("F", 1, 0, 10) }, 3.0, ""},
		{"float default", func(e *Env) any { return e.Float("MISSING", 2.5, 0, 10) }, 2.5, ""},
		{"float out of range", func(e *Env) any { return e.Float("BIG", 1, 0, 10) }, 1.0, "BIG must be a number above 0"},
		{"list", func(e *Env) any { return strings.Join(e.List("L"), "|") }, "a|b", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := New(func(k string) string { return vars[k] })
			if got := tc.read(e); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			err := e.Err()
			if (err != nil) != (tc.wantErr != "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// A function without the schema fails at init: it must never guess whose
// attribute names the table uses.
func TestSchema(t *testing.T) {
	jobs := contract.Schema{PartitionKey: "tenantId", SortKey: "jobId", FiredState: "Done"}.WithDefaults()
	for _, tc := range []struct {
		name, value string
		want        contract.Schema
		wantErr     string
	}{
		{"set", jobs.EnvValue(), jobs, ""},
		{"set, with spaces", " " + jobs.EnvValue() + "\n", jobs, ""},
		{"unset", "", contract.Default(), contract.EnvVar + " is not set"},
		{"blank", "  ", contract.Default(), contract.EnvVar + " is not set"},
		{"invalid", `{"firedState":"Pending"}`, contract.Default(), "FiredState"},
		{"not JSON", "userId", contract.Default(), contract.EnvVar},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := New(func(k string) string {
				if k == contract.EnvVar {
					return tc.value
				}
				return ""
			})
			got, again := e.Schema(), e.Schema()
			if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(again, tc.want) {
				t.Fatalf("Schema = %+v, want %+v", got, tc.want)
			}
			err := e.Err()
			if (err != nil) != (tc.wantErr != "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
			if err != nil && strings.Count(err.Error(), contract.EnvVar) > 1 && tc.name == "unset" {
				t.Fatalf("the problem is reported once per read: %v", err)
			}
		})
	}
}
