// Package timers builds, from a function's environment, the timer it
// drives, whatever its kind: it asks the registry (internal/core/timerkind)
// for the kind UNSCHEDULE_TIMER names, and importing it registers the
// built-in kinds (the EventBridge Scheduler client, the Step Functions
// executions and the TTL markers). The cancellation worker and the
// reconciler read the same variables, so the code that uses a timer is
// the same for every one.
package timers

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"

	// The built-in kinds register beside their adapters.
	_ "github.com/unschedule/unschedule/internal/core/adapters/awsscheduler"
	_ "github.com/unschedule/unschedule/internal/core/adapters/awssfn"
	_ "github.com/unschedule/unschedule/internal/core/adapters/ttlmarker"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/timerkind"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// Config is the timer (envvars.TimerKind, unset: the default kind) and
// what its kind read of its settings.
type Config struct {
	Timer timerspec.Name
	timerkind.Settings
}

// Load reads the timer's name and only the variables that timer needs;
// a missing one is recorded on e (e.Err).
func Load(e *lambdaenv.Env, getenv func(string) string) (Config, error) {
	l, err := timerkind.Parse(getenv(envvars.TimerKind))
	if err != nil {
		return Config{}, fmt.Errorf("configuration: %s: %w", envvars.TimerKind, err)
	}
	return Config{Timer: l, Settings: timerkind.Must(l).Load(e)}, nil
}

// Timer arms, moves and disarms items' schedules, and reads them.
type Timer = timerkind.Timer

// New builds the configured timer's adapter.
func New(aws aws.Config, c Config) (Timer, error) {
	k, ok := timerkind.Lookup(c.Timer)
	if !ok {
		return nil, fmt.Errorf("timer %q is not registered", c.Timer)
	}
	return k.New(aws, c.Settings)
}
