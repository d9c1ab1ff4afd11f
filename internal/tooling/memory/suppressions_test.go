package memory_test

import (
	"testing"

	"github.com/unschedule/unschedule/internal/tooling/memory"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// TestSuppressionsContract: the in-memory list keeps the suppression
// contract the DynamoDB list keeps.
func TestSuppressionsContract(t *testing.T) {
	testenv.SuppressionContract(t, memory.NewSuppressions())
}
