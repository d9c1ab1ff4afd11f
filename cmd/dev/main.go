// Command dev runs the whole app on one machine with no AWS (`make dev`):
// the web app, the task API, a local sign-in and the unscheduling pipeline
// in one process, with state in a local folder. It prints its URL when
// ready and stops cleanly on SIGINT or SIGTERM.
//
//	go run ./cmd/dev [-addr 127.0.0.1:8080] [-allow-remote] [-data .dev-data] [-web web/dist] [-clock wall|fake]
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	opts, err := parseOptions(os.Args[1:], os.Getenv, os.Stderr)
	if err != nil {
		os.Exit(2)
	}
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opts, os.Stdout, log); err != nil {
		fmt.Fprintln(os.Stderr, "dev:", err)
		os.Exit(1)
	}
}
