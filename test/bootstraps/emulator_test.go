package bootstraps

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// rieModule is the Lambda Runtime Interface Emulator installRIE installs.
const rieModule = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d"

// installRIE returns the path of the emulator in root/bin, go installing
// rieModule there first when it is absent.
func installRIE(goBin, root string) (string, error) {
	rie := filepath.Join(root, "bin", "aws-lambda-rie")
	if _, err := os.Stat(rie); err == nil {
		return rie, nil
	}
	cmd := exec.Command(goBin, "install", rieModule)
	cmd.Env = append(os.Environ(), "GOBIN="+filepath.Join(root, "bin"), "GOFLAGS=-mod=mod")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s: %w\n%s", rieModule, err, b)
	}
	return rie, nil
}

// syncBuffer collects a process's output, written from two goroutines and
// read from another.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// emulator is one Runtime Interface Emulator running one bootstrap.
type emulator struct {
	// out is what the emulator and the function wrote (the function's logs).
	out *syncBuffer
	api string
	cmd *exec.Cmd
}

// startEmulator runs rie on bootstrap with env (PATH is set to the
// system's) on two free loopback ports, and returns once it listens, or
// an error after wait.
func startEmulator(rie, bootstrap string, env []string, wait time.Duration) (*emulator, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	e := &emulator{out: &syncBuffer{}, api: fmt.Sprintf("127.0.0.1:%d", ports[0])}
	e.cmd = exec.Command(rie, "--runtime-interface-emulator-address", e.api,
		"--runtime-api-address", fmt.Sprintf("127.0.0.1:%d", ports[1]), bootstrap)
	e.cmd.Dir = filepath.Dir(bootstrap)
	e.cmd.Env = append(env, "PATH=/usr/bin:/bin")
	e.cmd.Stdout, e.cmd.Stderr = e.out, e.out
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := e.cmd.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		c, err := net.DialTimeout("tcp", e.api, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return e, nil
		}
		if time.Now().After(deadline) {
			e.stop()
			return nil, fmt.Errorf("the emulator did not listen: %s", e.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// invoke invokes the function once with event and returns its response body.
func (e *emulator) invoke(event string, timeout time.Duration) ([]byte, error) {
	client := &http.Client{Timeout: timeout}
	resp, err := client.Post("http://"+e.api+"/2015-03-31/functions/function/invocations", "application/json", strings.NewReader(event))
	if err != nil {
		return nil, fmt.Errorf("invoke: %w: %s", err, e.out.String())
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// stop kills the emulator and the bootstrap it started.
func (e *emulator) stop() {
	_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
	_ = e.cmd.Wait()
}

func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
