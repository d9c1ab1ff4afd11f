package campaigntable

import (
	"os"
	"testing"

	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// One dynalite for the package; each test gets its own table.
var endpoint string

// TestMain runs the package's tests on dynalite; without it they are
// skipped, except under CI=true (testenv.RunWithDynalite).
func TestMain(m *testing.M) { os.Exit(testenv.RunWithDynalite(m, &endpoint)) }
