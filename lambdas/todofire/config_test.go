package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

func TestLoadConfig(t *testing.T) {
	todo := map[string]string{"TABLE_NAME": "tasks", contract.EnvVar: tableschema.Todo().EnvValue(),
		"TOPIC_ARN_PREFIX": "arn:topic-", "TOPIC_SHARDS": "2", "WEB_URL": "https://w"}
	with := func(k, v string) map[string]string {
		m := map[string]string{k: v}
		for a, b := range todo {
			if a != k {
				m[a] = b
			}
		}
		return m
	}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    settings
		wantErr string
	}{
		{"the to-do schema", todo, settings{Table: "tasks", Topics: []string{"arn:topic-0", "arn:topic-1"}, WebURL: "https://w"}, ""},
		{"another schema", with(contract.EnvVar, testenv.ConsumerSchema().EnvValue()), settings{}, "to-do"},
		{"no topics", with("TOPIC_ARN_PREFIX", ""), settings{}, "TOPIC_ARN_PREFIX"},
		{"no table", with("TABLE_NAME", ""), settings{}, "TABLE_NAME"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := loadConfig(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("loadConfig = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
