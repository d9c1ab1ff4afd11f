package testenv

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// MotoRegion is the region every local client uses.
const MotoRegion = "us-east-1"

// Moto is a running moto server: one process that serves every AWS
// service on one port, with all state in memory.
type Moto struct{ *server }

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
// and reset to an empty account on every call. When moto_server is not on
// PATH, in $HOME/.pyenv/shims or in $(pyenv root)/shims it skips the test,
// or fails it when CI=true (CI must run the contract against moto). A
// package that calls it stops the server in TestMain with StopSharedMoto.
func SharedMoto(t testing.TB) *Moto {
	t.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedMoto == nil && sharedErr == nil {
		sharedMoto, sharedErr = launchMoto()
	}
	if errors.Is(sharedErr, errMotoNotInstalled) {
		require(t, sharedErr)
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

var errMotoNotInstalled = errors.New("moto_server is not installed: `pip install 'moto[server]'` (or put its pyenv shims on PATH) to run the moto-backed contract tests")

func launchMoto() (*Moto, error) {
	exe, ok := findTool("moto_server")
	if !ok {
		return nil, errMotoNotInstalled
	}
	// Its stderr is left out: it logs every request there.
	s, err := startServer("moto_server", exe, nil, func(port string) []string { return []string{"-H", "127.0.0.1", "-p", port} })
	if err != nil {
		return nil, err
	}
	return &Moto{s}, nil
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
	if sharedMoto != nil {
		sharedMoto.Stop()
	}
	sharedMoto = nil
}

// SchedulerClient is an EventBridge Scheduler client for the server.
func (m *Moto) SchedulerClient() *scheduler.Client {
	return scheduler.New(scheduler.Options{Region: MotoRegion, Credentials: localCreds, BaseEndpoint: aws.String(m.Endpoint)})
}

// SQSClient is an SQS client for the server.
func (m *Moto) SQSClient() *sqs.Client {
	return sqs.New(sqs.Options{Region: MotoRegion, Credentials: localCreds, BaseEndpoint: aws.String(m.Endpoint)})
}

// SNSClient is an SNS client for the server.
func (m *Moto) SNSClient() *sns.Client {
	return sns.New(sns.Options{Region: MotoRegion, Credentials: localCreds, BaseEndpoint: aws.String(m.Endpoint)})
}
