package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestParseOptions(t *testing.T) {
	cdkJSON := filepath.Join(t.TempDir(), "cdk.json")
	if err := os.WriteFile(cdkJSON, []byte(`{"context":{"environments":{"dev":{"removalPolicy":"destroy"},"prod":{"removalPolicy":"retain"}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		check   func(o options) bool
		wantErr bool
	}{
		{"defaults", nil, func(o options) bool {
			return o.cfg.Env == "dev" && !o.cfg.KeepStack && !o.yes && o.cfg.EmailDomain == "example.com" && o.cfg.Lead == 0 &&
				!o.cfg.Retained && !o.cfg.AllowRetained
		}, false},
		{"flags", []string{"-env", "prod", "-keep-stack", "-yes", "-email-domain", "corp.example", "-lead", "3m", "-allow-retained"}, func(o options) bool {
			return o.cfg.Env == "prod" && o.cfg.KeepStack && o.yes && o.cfg.EmailDomain == "corp.example" && o.cfg.Lead == 3*time.Minute &&
				o.cfg.Retained && o.cfg.AllowRetained
		}, false},
		{"prod is retained, not allowed by default", []string{"-env", "prod"}, func(o options) bool {
			return o.cfg.Retained && !o.cfg.AllowRetained
		}, false},
		{"an environment cdk.json lacks", []string{"-env", "qa"}, nil, true},
		{"no cdk.json", []string{"-cdk-json", filepath.Join(t.TempDir(), "none.json")}, nil, true},
		{"empty env", []string{"-env", ""}, nil, true},
		{"stray argument", []string{"dev"}, nil, true},
		{"unknown flag", []string{"-region", "x"}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-cdk-json", cdkJSON}, tc.args...)
			o, err := parseOptions(args, io.Discard)
			if (err != nil) != tc.wantErr || (err == nil && !tc.check(o)) {
				t.Fatalf("%+v %v", o, err)
			}
		})
	}
}
