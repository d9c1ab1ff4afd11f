// Package lambdaenv reads a function's configuration from its environment
// once, at cold start, and reports every missing or malformed variable in
// one error so a misconfigured function fails fast and says why.
package lambdaenv

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/envvars"
)

// Env reads variables and collects problems.
type Env struct {
	get      func(string) string
	problems []string
}

// New reads from get (os.Getenv in a Lambda main).
func New(get func(string) string) *Env { return &Env{get: get} }

// Require returns a variable that must be set.
func (e *Env) Require(name string) string {
	v := strings.TrimSpace(e.get(name))
	if v == "" {
		e.problems = append(e.problems, name+" is not set")
	}
	return v
}

// Optional returns a variable, or def when it is unset.
func (e *Env) Optional(name, def string) string {
	if v := strings.TrimSpace(e.get(name)); v != "" {
		return v
	}
	return def
}

// List returns a comma-separated variable as a list ("" gives nil).
func (e *Env) List(name string) []string {
	var out []string
	for _, s := range strings.Split(e.get(name), ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Int returns a whole-number variable within [min, max], or def when unset.
func (e *Env) Int(name string, def, min, max int) int {
	s := strings.TrimSpace(e.get(name))
	if s == "" {
		return def
	}
	n, err := strconv.ParseFloat(s, 64) // CDK renders numbers such as "3" or "3.0"
	if err != nil || n != float64(int(n)) || int(n) < min || int(n) > max {
		e.problems = append(e.problems, fmt.Sprintf("%s must be a whole number from %d to %d (given %q)", name, min, max, s))
		return def
	}
	return int(n)
}

// Float returns a number variable above min and at most max, or def when
// unset.
func (e *Env) Float(name string, def, min, max float64) float64 {
	s := strings.TrimSpace(e.get(name))
	if s == "" {
		return def
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n <= min || n > max {
		e.problems = append(e.problems, fmt.Sprintf("%s must be a number above %v and at most %v (given %q)", name, min, max, s))
		return def
	}
	return n
}

// Schema returns the item schema handed over in contract.EnvVar. Unset is
// a problem, as is a value that does not parse or validate: a function
// that guessed a schema would read and write another app's attribute
// names on the table (the constructs always set it; the to-do app's is
// tableschema.Todo()). On a problem it returns contract.Default(), which
// Err then makes moot.
func (e *Env) Schema() contract.Schema {
	v := strings.TrimSpace(e.get(envvars.ItemSchema))
	s, err := contract.Parse(v)
	if v == "" {
		err = errors.New(envvars.ItemSchema + " is not set: set it to the item schema's JSON (contract.Schema.EnvValue); " +
			"the constructs set it on every function that reads items")
	}
	if err != nil {
		// Several readers (the timer, the scheduler) ask for it: one problem.
		if !slices.Contains(e.problems, err.Error()) {
			e.problems = append(e.problems, err.Error())
		}
		return contract.Default()
	}
	return s
}

// Err is nil when every variable read so far was fine.
func (e *Env) Err() error {
	if len(e.problems) == 0 {
		return nil
	}
	return errors.New("configuration: " + strings.Join(e.problems, "; "))
}

// Logger makes JSON the default log format and returns the logger.
func Logger() *slog.Logger {
	l := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	slog.SetDefault(l)
	return l
}

// Must returns v, or logs err as JSON and ends the process: a cold start
// that cannot work should fail at once, loudly.
func Must[T any](v T, err error) T {
	if err != nil {
		slog.Error("cold start failed", "error", err.Error())
		os.Exit(1)
	}
	return v
}
