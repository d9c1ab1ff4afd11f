package sim

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Summary sums a batch of histories.
type Summary struct {
	Histories int
	// Failed holds the results with violations, ordered by seed.
	Failed []Result
	Faults map[Fault]int
	Counts
	// Lag quantiles of notification time minus deadline.
	LagP50, LagP99, LagMax time.Duration
	Elapsed                time.Duration
}

// RunMany runs the histories of seeds first .. first+n-1 on workers
// goroutines (GOMAXPROCS when workers < 1), each with base as its
// configuration apart from the seed.
func RunMany(base Config, first int64, n, workers int) Summary {
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	began := time.Now()
	results := make([]Result, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				cfg := base
				cfg.Seed = first + i
				results[i] = Run(cfg)
			}
		})
	}
	wg.Wait()
	sum := Summary{Histories: n, Faults: map[Fault]int{}}
	var lags []time.Duration
	for _, r := range results { // in seed order
		if r.Failed() {
			sum.Failed = append(sum.Failed, r)
		}
		for k, v := range r.Faults {
			sum.Faults[k] += v
		}
		sum.add(r.Counts)
		lags = append(lags, r.Lags...)
	}
	slices.Sort(lags)
	if len(lags) > 0 {
		sum.LagP50, sum.LagP99, sum.LagMax = lags[len(lags)/2], lags[len(lags)*99/100], lags[len(lags)-1]
	}
	sum.Elapsed = time.Since(began)
	return sum
}
