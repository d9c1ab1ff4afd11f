package test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCDKAppImportsNoAWSSDK: the CDK app (the module root's package main,
// and every construct through it) builds infrastructure only. An AWS SDK
// service client or the Lambda runtime in its import graph means a
// construct reached into a function's adapter, and the app compiles and
// ships code it never runs.
func TestCDKAppImportsNoAWSSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "..").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	var bad []string
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/aws/aws-sdk-go-v2") || strings.HasPrefix(pkg, "github.com/aws/aws-lambda-go") ||
			strings.HasPrefix(pkg, "github.com/unschedule/unschedule/internal/adapters") {
			bad = append(bad, pkg)
		}
	}
	if len(bad) > 0 {
		t.Fatalf("the CDK app imports %d runtime packages, e.g. %v: move the constant it needs into a package without SDK imports (internal/tableschema, internal/metrics)", len(bad), bad[:min(len(bad), 5)])
	}
}
