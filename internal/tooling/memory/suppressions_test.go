package memory_test

import (
	"testing"

	"github.com/unschedule/unschedule/internal/campaigns/campaigntest"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// TestSuppressionsContract: the in-memory list keeps the suppression
// contract the DynamoDB list keeps.
func TestSuppressionsContract(t *testing.T) {
	campaigntest.SuppressionContract(t, memory.NewSuppressions())
}
