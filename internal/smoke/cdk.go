package smoke

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// CLI runs the CDK CLI on the app, as `make deploy` and `make destroy` do.
type CLI struct {
	// Command is the CDK CLI. Default: "cdk" (the Makefile puts
	// node_modules/.bin first on PATH).
	Command string
	// App is the --app command. Default: "go run .".
	App string
	// Env is the -c env=<Env> context value (dev, prod).
	Env string
	// RequireApproval is deploy's --require-approval. Default: "broadening"
	// (as `make deploy`: the CLI asks before IAM or security group widening).
	RequireApproval string
	// Dir is the repository root. Default: the working directory.
	Dir            string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

var _ CDK = (*CLI)(nil)

// Args are the CLI arguments of a command (deploy, destroy) on stack.
func (c *CLI) Args(command, stack string) []string {
	app := c.App
	if app == "" {
		app = "go run ."
	}
	args := []string{"--app", app, "-c", "env=" + c.Env, command, stack}
	switch command {
	case "deploy":
		approval := c.RequireApproval
		if approval == "" {
			approval = "broadening"
		}
		args = append(args, "--require-approval", approval)
	case "destroy":
		args = append(args, "--force")
	}
	return args
}

func (c *CLI) run(ctx context.Context, command, stack string) error {
	name := c.Command
	if name == "" {
		name = "cdk"
	}
	args := c.Args(command, stack)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Dir, c.Stdin, c.Stdout, c.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

// Deploy implements CDK.
func (c *CLI) Deploy(ctx context.Context, stack string) error { return c.run(ctx, "deploy", stack) }

// Destroy implements CDK.
func (c *CLI) Destroy(ctx context.Context, stack string) error { return c.run(ctx, "destroy", stack) }
