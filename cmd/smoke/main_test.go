package main

import (
	"io"
	"testing"
	"time"
)

func TestParseOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		check   func(o options) bool
		wantErr bool
	}{
		{"defaults", nil, func(o options) bool {
			return o.cfg.Env == "dev" && !o.cfg.KeepStack && !o.yes && o.cfg.EmailDomain == "example.com" && o.cfg.Lead == 0
		}, false},
		{"flags", []string{"-env", "prod", "-keep-stack", "-yes", "-email-domain", "corp.example", "-lead", "3m"}, func(o options) bool {
			return o.cfg.Env == "prod" && o.cfg.KeepStack && o.yes && o.cfg.EmailDomain == "corp.example" && o.cfg.Lead == 3*time.Minute
		}, false},
		{"empty env", []string{"-env", ""}, nil, true},
		{"stray argument", []string{"dev"}, nil, true},
		{"unknown flag", []string{"-region", "x"}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseOptions(tc.args, io.Discard)
			if (err != nil) != tc.wantErr || (err == nil && !tc.check(o)) {
				t.Fatalf("%+v %v", o, err)
			}
		})
	}
}
