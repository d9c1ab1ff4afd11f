package scheduleonwrite

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
)

// TestMergeStreamViews: the narrowest view that carries both, and
// StreamCarries as its order.
func TestMergeStreamViews(t *testing.T) {
	const (
		none = awsdynamodb.StreamViewType("")
		keys = awsdynamodb.StreamViewType_KEYS_ONLY
		nw   = awsdynamodb.StreamViewType_NEW_IMAGE
		old  = awsdynamodb.StreamViewType_OLD_IMAGE
		both = awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES
	)
	for _, tc := range []struct {
		a, b, want awsdynamodb.StreamViewType
	}{
		{none, none, none}, {none, keys, keys}, {keys, keys, keys}, {keys, old, old}, {nw, none, nw},
		{nw, old, both}, {old, nw, both}, {both, old, both}, {nw, nw, nw},
	} {
		if got := MergeStreamViews(tc.a, tc.b); got != tc.want {
			t.Errorf("MergeStreamViews(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
	for _, tc := range []struct {
		have, want awsdynamodb.StreamViewType
		ok         bool
	}{
		{both, old, true}, {both, nw, true}, {nw, old, false}, {old, both, false}, {none, old, false}, {keys, keys, true}, {old, keys, true},
	} {
		if got := StreamCarries(tc.have, tc.want); got != tc.ok {
			t.Errorf("StreamCarries(%q, %q) = %v, want %v", tc.have, tc.want, got, tc.ok)
		}
	}
}
