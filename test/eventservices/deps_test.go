package eventservices

import (
	"os/exec"
	"strings"
	"testing"
)

// TestConstructsImportNoAWSSDK: the two constructs and the example stacks
// build infrastructure only; the SDK clients (futureevents/client,
// deferredjobs/writer), the Lambda runtime and the adapters stay out of
// their import graph, as for the rest of the app (test/deps_test.go).
func TestConstructsImportNoAWSSDK(t *testing.T) {
	pkgs := []string{"../../constructs/futureevents", "../../constructs/deferredjobs",
		"../../examples/renewalreminder/renewalstack", "../../examples/barbershop/barbershopstack"}
	out, err := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/aws/aws-sdk-go-v2") || strings.HasPrefix(pkg, "github.com/aws/aws-lambda-go") ||
			(strings.HasPrefix(pkg, "github.com/unschedule/unschedule/internal/") && strings.Contains(pkg, "/adapters/")) {
			t.Errorf("a construct imports the runtime package %s: keep the constants it needs in an SDK-free package", pkg)
		}
	}
}
