package notifyfn_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/fire/firetest"
	"github.com/unschedule/unschedule/internal/todo/notifyfn"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
)

func TestLoad(t *testing.T) {
	todo := map[string]string{"TABLE_NAME": "tasks", "TOPIC_ARN_PREFIX": "arn:topic-", "TOPIC_SHARDS": "2", "WEB_URL": "https://w"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range todo {
			m[a] = b
		}
		m[k] = v
		return m
	}
	want := notifyfn.Settings{Table: "tasks", Schema: tableschema.Todo(), Topics: []string{"arn:topic-0", "arn:topic-1"}, WebURL: "https://w"}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    notifyfn.Settings
		wantErr string
	}{
		{"to-do schema by default", todo, want, ""},
		{"to-do schema named", with(contract.EnvVar, tableschema.Todo().EnvValue()), want, ""},
		{"another schema", with(contract.EnvVar, firetest.ConsumerSchema().EnvValue()), notifyfn.Settings{}, "to-do"},
		{"bad schema", with(contract.EnvVar, "{"), notifyfn.Settings{}, contract.EnvVar},
		{"no table", with("TABLE_NAME", ""), notifyfn.Settings{}, "TABLE_NAME"},
		{"no topics", with("TOPIC_ARN_PREFIX", ""), notifyfn.Settings{}, "TOPIC_ARN_PREFIX"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := notifyfn.Load(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Load = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
