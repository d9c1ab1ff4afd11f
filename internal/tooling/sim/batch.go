package sim

import (
	"runtime"
	"sort"
	"sync"
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
	seeds := make(chan int64)
	results := make(chan Result)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range seeds {
				cfg := base
				cfg.Seed = s
				results <- Run(cfg)
			}
		}()
	}
	go func() {
		for i := range int64(n) {
			seeds <- first + i
		}
		close(seeds)
		wg.Wait()
		close(results)
	}()
	sum := Summary{Faults: map[Fault]int{}}
	var lags []time.Duration
	for r := range results {
		sum.Histories++
		if r.Failed() {
			sum.Failed = append(sum.Failed, r)
		}
		for k, v := range r.Faults {
			sum.Faults[k] += v
		}
		sum.add(r.Counts)
		lags = append(lags, r.Lags...)
	}
	sort.Slice(sum.Failed, func(i, j int) bool { return sum.Failed[i].Seed < sum.Failed[j].Seed })
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	if len(lags) > 0 {
		sum.LagP50, sum.LagP99, sum.LagMax = lags[len(lags)/2], lags[len(lags)*99/100], lags[len(lags)-1]
	}
	sum.Elapsed = time.Since(began)
	return sum
}
