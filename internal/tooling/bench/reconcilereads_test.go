package bench

import (
	"context"
	"testing"
)

// The shape of a pass's reads, not their timings: through the armed
// index they grow with the armed items (and the fired window), not with
// the table; the Scan reads the whole table, twice (the overdue sweep
// and the items phase).
func TestReconcileReadsGrowWithTheArmedItems(t *testing.T) {
	ctx := context.Background()
	measure := func(items, every int) (scan, index ReconcileReads) {
		t.Helper()
		rs, err := MeasureReconcileReads(ctx, items, every)
		if err != nil {
			t.Fatal(err)
		}
		return rs[0], rs[1]
	}
	smallScan, small := measure(20_000, 100) // 200 armed
	bigScan, big := measure(200_000, 1000)   // 200 armed, a table 10 times larger
	_, moreArmed := measure(20_000, 10)      // 2,000 armed
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"the Scan reads every item twice", smallScan.ItemsRead == 2*smallScan.Items && bigScan.ItemsRead == 2*bigScan.Items},
		{"the Scan's read units grow with the table", bigScan.ReadUnits >= 9*smallScan.ReadUnits},
		{"the index reads as much of a 10 times larger table with as many armed items", big.ItemsRead == small.ItemsRead && big.ReadUnits <= small.ReadUnits+1},
		{"the index reads at most the armed items and the fired window, twice", small.ItemsRead <= 4*small.Armed},
		{"the index's reads grow with the armed items", moreArmed.ItemsRead >= 9*small.ItemsRead && moreArmed.ReadUnits >= 5*small.ReadUnits},
		{"no single-item read in a pass without drift", small.Gets == 0 && big.Gets == 0 && smallScan.Gets == 0},
		{"the index costs under a tenth of the Scan at 1% armed", small.ReadUnits*10 < smallScan.ReadUnits},
	} {
		if !tc.ok {
			t.Errorf("%s: scan %+v / %+v, index %+v / %+v, more armed %+v", tc.name, smallScan, bigScan, small, big, moreArmed)
		}
	}
}
