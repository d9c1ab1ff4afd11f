package test

import (
	"testing"

	"github.com/unschedule/unschedule/internal/core/envvars"
)

// TestFunctionEnvNamesAreEnvvars: every variable a construct sets on a
// function of the to-do app is a name from internal/core/envvars, the one
// list the mains read from, so a construct cannot set a name no main
// reads (or spell one differently).
func TestFunctionEnvNamesAreEnvvars(t *testing.T) {
	for _, env := range []string{"dev", "prod"} {
		t.Run(env, func(t *testing.T) {
			for name, tpl := range Stack(t, env).Templates() {
				if bad := envvars.Unknown(tpl); len(bad) > 0 {
					t.Errorf("%s: functions set variables not in internal/core/envvars: %v", name, bad)
				}
			}
		})
	}
}
