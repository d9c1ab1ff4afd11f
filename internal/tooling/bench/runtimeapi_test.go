package bench

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as a bootstrap for RunToFirstNext, by mode.
func TestMain(m *testing.M) {
	api := "http://" + os.Getenv("AWS_LAMBDA_RUNTIME_API")
	switch os.Getenv("BENCH_FAKE_BOOTSTRAP") {
	case "next": // what lambda.Start does once it is set up
		_, _ = http.Get(api + nextPath)
		os.Exit(0)
	case "initerror":
		_, _ = http.Post(api+initErrorPath, "application/json", strings.NewReader(`{"errorMessage":"missing TABLE_NAME"}`))
		select {}
	case "exit":
		os.Exit(3)
	case "hang":
		select {}
	}
	os.Exit(m.Run())
}

func TestRunToFirstNext(t *testing.T) {
	for _, tc := range []struct {
		mode, wantErr string
	}{
		{"next", ""},
		{"initerror", "missing TABLE_NAME"},
		{"exit", "exited before asking for an event"},
		{"hang", "no request for an event"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			timeout := 10 * time.Second
			if tc.mode == "hang" {
				timeout = time.Second
			}
			run, err := RunToFirstNext(os.Args[0], []string{"BENCH_FAKE_BOOTSTRAP=" + tc.mode}, timeout)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				// The values themselves are timings: only that they were read.
				if run.WallMs <= 0 || run.CPUMs <= 0 {
					t.Errorf("got %+v, want the wall and CPU time read", run)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("got %v, want an error with %q", err, tc.wantErr)
			}
		})
	}
}

func TestParseSchedstat(t *testing.T) {
	for _, tc := range []struct {
		in        string
		cpu, wait int64
		wantErr   bool
	}{
		{"5683516 35018477 4\n", 5683516, 35018477, false},
		{"12 34", 12, 34, false},
		{"12\n", 0, 0, true},
		{"x 1 2", 0, 0, true},
	} {
		cpu, wait, err := ParseSchedstat([]byte(tc.in))
		if (err != nil) != tc.wantErr || cpu != tc.cpu || wait != tc.wait {
			t.Errorf("ParseSchedstat(%q) = %d %d %v, want %d %d err=%v", tc.in, cpu, wait, err, tc.cpu, tc.wait, tc.wantErr)
		}
	}
}
