// Command unschedule is the operator's CLI for a deployed stack: why an
// item is where it is, what the reconciler would repair, and what the
// failure queues hold. It discovers everything from the stack's name and
// runs the functions' own code; its flags, output and exit codes are
// internal/ops (Main). See README.md.
package main

import (
	"context"
	"os"

	"github.com/unschedule/unschedule/internal/ops"
)

func main() {
	os.Exit(ops.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
