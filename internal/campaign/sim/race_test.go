//go:build race

package sim

// raceEnabled: the race detector slows the histories about tenfold.
const raceEnabled = true
