// Command unschedule is the operator's CLI for a deployed stack: why an
// item is where it is, what the reconciler would repair, and what the
// failure queues hold. It discovers everything from the stack's name and
// runs the functions' own code (internal/ops). See README.md.
package main

import (
	"context"
	"os"

	"github.com/unschedule/unschedule/internal/core/lambdaenv/awsenv"
	"github.com/unschedule/unschedule/internal/ops"
)

func main() {
	open := func(ctx context.Context, stack string) (*ops.World, error) {
		cfg, err := awsenv.Config(ctx)
		if err != nil {
			return nil, err
		}
		return ops.Open(ctx, cfg, stack)
	}
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr, open))
}
