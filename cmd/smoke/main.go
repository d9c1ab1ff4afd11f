// Command smoke is `make smoke ENV=dev`: the real task lifecycle in your
// AWS account, then the cleanup (internal/tooling/smoke; docs/deploying.md,
// "Smoke test").
//
//	go run ./cmd/smoke -env dev [-keep-stack] [-yes] [-allow-retained] [-email-domain example.com]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/unschedule/unschedule/internal/tooling/smoke"
	"github.com/unschedule/unschedule/internal/tooling/smokeaws"
)

type options struct {
	cfg       smoke.Config
	yes       bool
	preflight bool
	// cdkJSON is the path of cdk.json, which says whether the environment
	// retains its resources.
	cdkJSON string
}

func parseOptions(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("smoke", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.cfg.Env, "env", "dev", "environment of cdk.json to deploy and test (the stack Unschedule-<env>)")
	fs.BoolVar(&o.cfg.KeepStack, "keep-stack", false, "keep the stack if this run created it (a stack that existed is always kept)")
	fs.BoolVar(&o.yes, "yes", false, "deploy with --require-approval never (default: the CLI asks before widening IAM)")
	fs.BoolVar(&o.preflight, "preflight", false, "only check that AWS credentials and a region are there, and exit")
	fs.BoolVar(&o.cfg.AllowRetained, "allow-retained", false,
		"run against an environment whose cdk.json removalPolicy is \"retain\" (prod): it deploys this working tree over that stack and adds a test user and app client to its user pool")
	fs.StringVar(&o.cdkJSON, "cdk-json", "cdk.json", "the app's cdk.json, which says whether the environment retains its resources")
	fs.StringVar(&o.cfg.EmailDomain, "email-domain", "example.com", "domain of the test user's address (if allowedEmailDomains restricts sign-up)")
	fs.DurationVar(&o.cfg.Lead, "lead", 0, "how far ahead each task is due (default 2m)")
	fs.DurationVar(&o.cfg.MaxLag, "max-lag", 0, "how long past its deadline a notification may take (default 5m)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 || o.cfg.Env == "" {
		err := fmt.Errorf("unexpected arguments %q: every setting is a flag (-env dev)", fs.Args())
		fmt.Fprintln(stderr, err)
		return o, err
	}
	b, err := os.ReadFile(o.cdkJSON)
	if err == nil {
		o.cfg.Retained, err = smoke.Retained(b, o.cfg.Env)
	}
	if err != nil {
		err = fmt.Errorf("smoke: %w (run it from the repository root, or pass -cdk-json)", err)
		fmt.Fprintln(stderr, err)
		return o, err
	}
	return o, nil
}

func main() {
	o, err := parseOptions(os.Args[1:], os.Stderr)
	if err != nil {
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	aws, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "smoke: read the AWS configuration:", err)
		os.Exit(1)
	}
	source, err := smoke.RequireCredentials(ctx, aws.Credentials, 5*time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, "smoke: refused:", err)
		os.Exit(1)
	}
	if aws.Region == "" {
		fmt.Fprintln(os.Stderr, "smoke: refused: no AWS region: set AWS_REGION, or a region in your profile (aws configure)")
		os.Exit(1)
	}
	if o.preflight {
		fmt.Printf("smoke: AWS credentials %s, region %s\n", source, aws.Region)
		return
	}
	o.cfg.Region = aws.Region
	approval := ""
	if o.yes {
		approval = "never"
	}
	d := smoke.Deps{
		Credentials: aws.Credentials,
		CDK:         &smoke.CLI{Env: o.cfg.Env, RequireApproval: approval, Stdin: os.Stdin, Stdout: os.Stderr, Stderr: os.Stderr},
		AWS:         smokeaws.New(aws),
		NewTasks:    func(url, tok string) smoke.Tasks { return &smoke.HTTPTasks{BaseURL: url, Token: tok} },
		Out:         os.Stdout,
	}
	if _, err := smoke.Run(ctx, o.cfg, d); err != nil {
		fmt.Fprintln(os.Stderr, "smoke: FAILED:", err)
		os.Exit(1)
	}
}
