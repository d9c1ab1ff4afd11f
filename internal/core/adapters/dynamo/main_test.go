package dynamo

import (
	"os"
	"sync/atomic"
	"testing"

	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// One dynalite for the package; each test gets its own table.
var (
	endpoint string
	tables   atomic.Int64
)

// TestMain runs the package's tests on dynalite; without it they are
// skipped, except under CI=true (testenv.RunWithDynalite).
func TestMain(m *testing.M) { os.Exit(testenv.RunWithDynalite(m, &endpoint)) }
