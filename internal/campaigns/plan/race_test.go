//go:build race

package plan

// raceEnabled: the race detector slows the property tests about tenfold.
const raceEnabled = true
