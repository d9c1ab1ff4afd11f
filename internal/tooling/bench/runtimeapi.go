package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// InitRun is one cold start measured up to the first event request:
// WallMs from starting the process, CPUMs the time its threads ran on a
// CPU by then and WaitMs the time they waited for one (schedstat).
type InitRun struct {
	WallMs, CPUMs, WaitMs float64
}

// Runtime API paths (https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html).
const (
	nextPath      = "/2018-06-01/runtime/invocation/next"
	initErrorPath = "/2018-06-01/runtime/init/error"
)

// RunToFirstNext starts the bootstrap bin with env and a stub of the
// Lambda runtime API, and measures it up to its first request for an
// event (the stub reads its CPU time then), then kills it. An init error
// or an exit first is an error.
func RunToFirstNext(bin string, env []string, timeout time.Duration) (InitRun, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return InitRun{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	type result struct {
		run InitRun
		err error
	}
	done := make(chan result, 2)
	var start time.Time
	var pid int
	ready := make(chan struct{}) // closed once start and pid are set
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.URL.Path {
		case nextPath:
			<-ready
			wall := time.Since(start)
			cpu, wait, err := schedstat(pid)
			done <- result{InitRun{WallMs: ms64(wall), CPUMs: cpu, WaitMs: wait}, err}
			<-ctx.Done() // never answer: the measurement ends here
		case initErrorPath:
			b, _ := io.ReadAll(io.LimitReader(req.Body, 4096))
			done <- result{err: fmt.Errorf("init error: %s", b)}
			w.WriteHeader(http.StatusAccepted)
		default:
			done <- result{err: fmt.Errorf("unexpected runtime API request %s %s", req.Method, req.URL.Path)}
			w.WriteHeader(http.StatusNotFound)
		}
	})}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()

	var out bytes.Buffer
	cmd := exec.Command(bin)
	cmd.Dir = filepath.Dir(bin)
	cmd.Env = append(append([]string(nil), env...), "AWS_LAMBDA_RUNTIME_API="+l.Addr().String(), "PATH=/usr/bin:/bin")
	cmd.Stdout, cmd.Stderr = &out, &out
	start = time.Now()
	if err := cmd.Start(); err != nil {
		return InitRun{}, err
	}
	pid = cmd.Process.Pid
	close(ready)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var r result
	select {
	case r = <-done:
	case err := <-exited:
		r.err = fmt.Errorf("exited before asking for an event (%v)", err)
		exited <- err
	case <-ctx.Done():
		r.err = fmt.Errorf("no request for an event within %s", timeout)
	}
	_ = cmd.Process.Kill()
	<-exited // out is complete, and safe to read, once the process is waited for
	if r.err != nil {
		return InitRun{}, fmt.Errorf("%w; output: %s", r.err, firstLine(out.String()))
	}
	return r.run, nil
}

func ms64(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// schedstat sums the on-CPU and run-queue times (ms) of pid's threads.
func schedstat(pid int) (cpuMs, waitMs float64, err error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("schedstat: %w", err)
	}
	var cpu, wait int64
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue // the thread ended
		}
		c, w, err := ParseSchedstat(b)
		if err != nil {
			return 0, 0, err
		}
		cpu, wait = cpu+c, wait+w
	}
	return float64(cpu) / 1e6, float64(wait) / 1e6, nil
}

// ParseSchedstat reads /proc/<pid>/task/<tid>/schedstat: the time on a
// CPU and the time waiting on a run queue, in ns.
func ParseSchedstat(b []byte) (cpuNs, waitNs int64, err error) {
	if _, err := fmt.Sscan(string(b), &cpuNs, &waitNs); err != nil {
		return 0, 0, fmt.Errorf("schedstat: want at least two numbers, got %q: %w", string(b), err)
	}
	return cpuNs, waitNs, nil
}
