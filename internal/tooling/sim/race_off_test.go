//go:build !race

package sim

// raceDetector: this test binary runs under the race detector.
const raceDetector = false
