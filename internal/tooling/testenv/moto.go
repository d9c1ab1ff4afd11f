package testenv

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// ErrMotoNotInstalled is returned by LaunchMoto when no moto_server is
// found on PATH, in $HOME/.pyenv/shims or in $(pyenv root)/shims.
var ErrMotoNotInstalled = errors.New("moto_server is not installed: `pip install 'moto[server]'` (or put its pyenv shims on PATH) to run the moto-backed contract tests")

// MotoRegion is the region every moto client uses.
const MotoRegion = "us-east-1"

// Moto is a running moto server: one process that serves every AWS
// service on one port, with all state in memory.
type Moto struct {
	// Endpoint is the server's base URL, e.g. http://127.0.0.1:41234.
	Endpoint string
	cmd      *exec.Cmd
	done     chan struct{}
}

// findMotoServer looks for moto_server where pyenv installs it, since a
// CI shell may not have the pyenv shims on PATH.
func findMotoServer() (string, error) {
	if p, err := exec.LookPath("moto_server"); err == nil {
		return p, nil
	}
	var dirs []string
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".pyenv", "shims"))
	}
	if root := os.Getenv("PYENV_ROOT"); root != "" {
		dirs = append(dirs, filepath.Join(root, "shims"))
	}
	if out, err := exec.Command("pyenv", "root").Output(); err == nil {
		dirs = append(dirs, filepath.Join(strings.TrimSpace(string(out)), "shims"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "moto_server")
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", ErrMotoNotInstalled
}

// LaunchMoto starts moto_server on a free loopback port and waits until
// it accepts connections. Call Stop when done. ErrMotoNotInstalled when
// there is no moto_server.
func LaunchMoto() (*Moto, error) {
	exe, err := findMotoServer()
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	// pyenv's shim needs its shims directory on PATH to find the version.
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(exe)+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Stderr = nil // it logs every request there
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start moto_server: %w", err)
	}
	m := &Moto{Endpoint: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(m.done) }()
	if err := waitForPort("moto_server", port, m.done); err != nil {
		m.Stop()
		return nil, fmt.Errorf("moto_server: %w", err)
	}
	return m, nil
}

// Stop kills the server's process group and waits for it to exit.
func (m *Moto) Stop() {
	if m == nil || m.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
	<-m.done
}

// Reset drops every resource of every service (moto's POST
// /moto-api/reset), so each suite starts from an empty account.
func (m *Moto) Reset(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.Endpoint+"/moto-api/reset", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("moto reset: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("moto reset: status %s", resp.Status)
	}
	return nil
}

var (
	sharedMu   sync.Mutex
	sharedMoto *Moto
	sharedErr  error
)

// SharedMoto returns the test package's moto server, started on first use
// and reset to an empty account on every call. When moto is not installed
// it skips the test, or fails it when CI=true (CI must run the contract
// against moto). A package that calls it stops the server in TestMain
// with StopSharedMoto.
func SharedMoto(t testing.TB) *Moto {
	t.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedMoto == nil && sharedErr == nil {
		sharedMoto, sharedErr = LaunchMoto()
	}
	if errors.Is(sharedErr, ErrMotoNotInstalled) && os.Getenv("CI") != "true" {
		t.Skipf("skipping the moto-backed contract: %v", sharedErr)
	}
	if errors.Is(sharedErr, ErrMotoNotInstalled) {
		t.Fatalf("CI=true, so the contract must run against moto: %v", sharedErr)
	}
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	if err := sharedMoto.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	return sharedMoto
}

// RunWithMoto is a TestMain body for a package whose tests use
// SharedMoto: it runs the tests, then stops the server.
//
//	func TestMain(m *testing.M) { os.Exit(testenv.RunWithMoto(m)) }
func RunWithMoto(m *testing.M) int {
	defer StopSharedMoto()
	return m.Run()
}

// StopSharedMoto stops the server SharedMoto started, if any.
func StopSharedMoto() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	sharedMoto.Stop()
	sharedMoto = nil
}

var motoCreds = credentials.NewStaticCredentialsProvider("AKIDLOCAL", "local-secret", "")

// SchedulerClient is an EventBridge Scheduler client for the server.
func (m *Moto) SchedulerClient() *scheduler.Client {
	return scheduler.New(scheduler.Options{Region: MotoRegion, Credentials: motoCreds, BaseEndpoint: aws.String(m.Endpoint)})
}

// SQSClient is an SQS client for the server.
func (m *Moto) SQSClient() *sqs.Client {
	return sqs.New(sqs.Options{Region: MotoRegion, Credentials: motoCreds, BaseEndpoint: aws.String(m.Endpoint)})
}

// SNSClient is an SNS client for the server.
func (m *Moto) SNSClient() *sns.Client {
	return sns.New(sns.Options{Region: MotoRegion, Credentials: motoCreds, BaseEndpoint: aws.String(m.Endpoint)})
}
