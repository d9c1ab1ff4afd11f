package testenv

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
)

// StartTimeout bounds how long a server may take to accept connections.
// moto_server, a Python process, needs well over 15 s to start on a busy
// 2-core machine; the wait ends as soon as the port answers.
const StartTimeout = 60 * time.Second

// localCreds are the fake static credentials of every local client.
var localCreds = credentials.NewStaticCredentialsProvider("AKIDLOCAL", "local-secret", "")

// RepoRoot walks up from the working directory to the directory holding
// go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// repoBin is the repo's node_modules/.bin/name, what `npm ci` installs.
func repoBin(name string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	p := filepath.Join(root, "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s is not installed: run `npm ci` in the repo root (make test does this)", name)
	}
	return p, nil
}

// findTool looks for a Python tool on PATH, then where pyenv puts its
// shims, since a CI shell may not have them on PATH.
func findTool(name string) (string, bool) {
	dirs := []string{""}
	if root := os.Getenv("PYENV_ROOT"); root != "" {
		dirs = append(dirs, filepath.Join(root, "shims"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".pyenv", "shims"))
	}
	if out, err := exec.Command("pyenv", "root").Output(); err == nil {
		dirs = append(dirs, filepath.Join(strings.TrimSpace(string(out)), "shims"))
	}
	for _, d := range dirs {
		if p, err := exec.LookPath(filepath.Join(d, name)); err == nil {
			return p, true
		}
	}
	return "", false
}

// require skips t for want of a tool (err says which and how to install
// it), or fails it under CI=true, where every test must run.
func require(t testing.TB, err error) {
	t.Helper()
	if err != nil && os.Getenv("CI") == "true" {
		t.Fatalf("CI=true, so this test must run: %v", err)
	}
	if err != nil {
		t.Skip(err)
	}
}

// NodeBin is the project's Node (node_modules/.bin, what `npm ci`
// installs), or the one on PATH. Without one the test is skipped, except
// under CI=true, where it fails.
func NodeBin(t testing.TB) string {
	t.Helper()
	p, err := repoBin("node")
	if err != nil {
		p, err = exec.LookPath("node")
	}
	require(t, err)
	return p
}

// CfnLint runs cfn-lint (CloudFormation's resource schemas and rules) on
// one synthesized template, failing on any error or warning but W3005
// (CDK's own redundant DependsOn beside a Ref or GetAtt). Without
// cfn-lint it skips, or fails under CI=true.
func CfnLint(t testing.TB, template any) {
	t.Helper()
	bin, ok := findTool("cfn-lint")
	if !ok {
		require(t, errors.New("cfn-lint is not installed: pip install cfn-lint"))
	}
	f := filepath.Join(t.TempDir(), "template.json")
	b, err := json.Marshal(template)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--format", "parseable", "--ignore-checks", "W3005", "--", f).CombinedOutput()
	if err != nil {
		t.Fatalf("cfn-lint: %v\n%s", err, out)
	}
}

// server is a local server process on a loopback port (dynalite,
// moto_server).
type server struct {
	// Endpoint is the server's base URL, e.g. http://127.0.0.1:41234.
	Endpoint string
	cmd      *exec.Cmd
	done     chan struct{}
}

// startServer starts exe with args(port) on a free loopback port, its
// directory first on PATH (node's and pyenv's shims need it), and waits
// until it accepts connections. A server that exits once its port answers
// lost that port to another test binary's server: it starts again on
// another port, up to three times.
func startServer(name, exe string, stderr io.Writer, args func(port string) []string) (*server, error) {
	for attempt := 1; ; attempt++ {
		s, err := startOn(name, exe, stderr, args)
		if !errors.Is(err, errPortTaken) || attempt == 3 {
			return s, err
		}
	}
}

var errPortTaken = errors.New("the port was taken by another server")

func startOn(name, exe string, stderr io.Writer, args func(port string) []string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, args(port)...)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(exe)+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Stderr = stderr
	// Its own process group, so Stop ends it and anything it spawned; and
	// killed with the test binary, should that die without cleanup.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	s := &server{Endpoint: "http://127.0.0.1:" + port, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.done) }()
	for deadline := time.Now().Add(StartTimeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case <-s.done:
			return nil, fmt.Errorf("%s exited before accepting connections (see its output above)", name)
		default:
		}
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 200*time.Millisecond); err == nil {
			_ = c.Close()
			// Two test binaries may pick the same free port: the one
			// whose server lost the bind exits at once, and must not
			// talk to the other's server.
			select {
			case <-s.done:
				return nil, fmt.Errorf("%w: %s on port %s", errPortTaken, name, port)
			case <-time.After(300 * time.Millisecond):
			}
			return s, nil
		}
	}
	s.Stop()
	return nil, fmt.Errorf("%s did not accept connections on port %s within %s", name, port, StartTimeout)
}

// freePort is a loopback port nothing listens on now. It is closed again
// before the server binds it, so another test binary may take it
// meanwhile: startOn checks that the server which answers is its own.
func freePort() (string, error) {
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", fmt.Errorf("find a free port: %w", err)
		}
		port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		_ = l.Close()
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 100*time.Millisecond); err == nil {
			_ = c.Close()
			continue
		}
		return port, nil
	}
	return "", errors.New("find a free port: every port tried was taken")
}

// Stop kills the server's process group and waits for it to exit.
func (s *server) Stop() {
	if s == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
}
