package smoke

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"
)

// CLI runs the CDK CLI on the app, as `make deploy` and `make destroy` do.
type CLI struct {
	// Command is the CDK CLI. Default: "cdk" (the Makefile puts
	// node_modules/.bin first on PATH).
	Command string
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

// Deploy implements CDK: tags are the stack's (--tags key=value, sorted).
func (c *CLI) Deploy(ctx context.Context, stack string, tags map[string]string) error {
	args := []string{"--require-approval", cmp.Or(c.RequireApproval, "broadening")}
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		args = append(args, "--tags", k+"="+tags[k])
	}
	return c.run(ctx, "deploy", stack, args...)
}

// Destroy implements CDK.
func (c *CLI) Destroy(ctx context.Context, stack string) error {
	return c.run(ctx, "destroy", stack, "--force")
}

func (c *CLI) run(ctx context.Context, command, stack string, more ...string) error {
	name := cmp.Or(c.Command, "cdk")
	args := append([]string{"--app", "go run .", "-c", "env=" + c.Env, command, stack}, more...)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Dir, c.Stdin, c.Stdout, c.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

// Retained reports whether environment env of cdk.json (its bytes) keeps
// its stateful resources: removalPolicy "retain", or no removalPolicy (the
// app's default is retain, todoapp.Config). An environment cdk.json does
// not define is an error that names those it does.
func Retained(cdkJSON []byte, env string) (bool, error) {
	var f struct {
		Context struct {
			Environments map[string]struct {
				RemovalPolicy string `json:"removalPolicy"`
			} `json:"environments"`
		} `json:"context"`
	}
	if err := json.Unmarshal(cdkJSON, &f); err != nil {
		return false, fmt.Errorf("read cdk.json: %w", err)
	}
	e, ok := f.Context.Environments[env]
	if !ok {
		return false, fmt.Errorf("unknown environment %q: cdk.json defines %s under context.environments",
			env, strings.Join(slices.Sorted(maps.Keys(f.Context.Environments)), ", "))
	}
	return e.RemovalPolicy != "destroy", nil
}
