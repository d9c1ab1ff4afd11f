// Package testenv starts the servers that adapter tests run against (a
// dynalite DynamoDB server from the repo's node_modules) and holds shared
// contract tests that every implementation of a port must pass.
package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/armedindex"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
)

// StartTimeout bounds how long a server may take to accept connections.
// moto_server, a Python process, needs well over 15 s to start on a busy
// 2-core machine; the wait ends as soon as the port answers.
const StartTimeout = 60 * time.Second

// errNotInstalled is the message when node_modules lacks dynalite.
const errNotInstalled = "dynalite is not installed: run `npm ci` in the repo root (make test does this)"

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

// Dynalite is a running in-memory dynalite server.
type Dynalite struct {
	// Endpoint is the server's base URL, e.g. http://127.0.0.1:41234.
	Endpoint string
	cmd      *exec.Cmd
	done     chan struct{}
}

// LaunchDynalite starts an in-memory dynalite on a free loopback port and
// waits until it accepts connections. Call Stop when done. It suits a
// TestMain, where there is no testing.TB; tests use StartDynalite.
func LaunchDynalite() (*Dynalite, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(root, "node_modules", ".bin")
	exe := filepath.Join(bin, "dynalite")
	if _, err := os.Stat(exe); err != nil {
		return nil, errors.New(errNotInstalled)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	// Tables become ACTIVE at once: the default 500ms per create, update
	// and delete would dominate the tests' run time.
	cmd := exec.Command(exe, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0")
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Stderr = os.Stderr // its stdout only says where it listens
	// Its own process group, so Stop ends node and anything it spawned;
	// and killed with the test binary, should that die without cleanup.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start dynalite: %w", err)
	}
	d := &Dynalite{Endpoint: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(d.done) }()
	if err := waitForPort("dynalite", port, d.done); err != nil {
		d.Stop()
		return nil, err
	}
	return d, nil
}

// Stop kills the server's process group and waits for it to exit.
func (d *Dynalite) Stop() {
	if d == nil || d.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
	<-d.done
}

// StartDynalite starts an in-memory dynalite for the test and returns its
// endpoint; the server is killed when the test ends. A package with many
// tests should share one server through LaunchDynalite in TestMain.
func StartDynalite(t testing.TB) (endpoint string) {
	t.Helper()
	d, err := LaunchDynalite()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	return d.Endpoint
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitForPort(name string, port int, exited <-chan struct{}) error {
	addr := "127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(StartTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("%s exited before accepting connections (see its output above)", name)
		default:
		}
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s did not accept connections on %s within %s", name, addr, StartTimeout)
}

// DynamoClient is a DynamoDB client for a local endpoint, with fake static
// credentials in us-east-1.
func DynamoClient(t testing.TB, endpoint string) *dynamodb.Client {
	t.Helper()
	return NewDynamoClient(endpoint)
}

// NewDynamoClient is DynamoClient without a testing.TB (for TestMain).
func NewDynamoClient(endpoint string) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDLOCAL", "local-secret", ""),
		BaseEndpoint: aws.String(endpoint),
	})
}

// TaskTableInput is the task table exactly as the CDK construct declares
// it: keys, the sparse pending index and the sparse local index of each
// user's Pending tasks from tableschema, on-demand
// billing, and a stream with old and new images. (dynalite accepts the
// stream specification but ignores it: stream decoding is tested on
// fixtures, not on a live stream.)
func TaskTableInput(name string) *dynamodb.CreateTableInput {
	s := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	return &dynamodb.CreateTableInput{
		TableName: aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{
			s(tableschema.PartitionKey), s(tableschema.SortKey),
			s(tableschema.PendingShardAttr), s(tableschema.PendingSortAttr), s(tableschema.UserPendingAttr),
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(tableschema.PartitionKey), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(tableschema.SortKey), KeyType: types.KeyTypeRange},
		},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName: aws.String(tableschema.PendingIndex),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String(tableschema.PendingShardAttr), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String(tableschema.PendingSortAttr), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}},
		LocalSecondaryIndexes: []types.LocalSecondaryIndex{{
			IndexName: aws.String(tableschema.UserPendingIndex),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String(tableschema.PartitionKey), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String(tableschema.UserPendingAttr), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
		}},
		BillingMode: types.BillingModePayPerRequest,
		StreamSpecification: &types.StreamSpecification{
			StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages,
		},
	}
}

// CreateTaskTable creates the task table (see TaskTableInput) and waits
// until it and its index are ACTIVE.
func CreateTaskTable(t testing.TB, client *dynamodb.Client, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	if err := createTable(ctx, client, TaskTableInput(name)); err != nil {
		t.Fatal(err)
	}
}

// CreateItemTable creates a table keyed as schema s says (string keys, no
// index) and waits until it is ACTIVE: an adopter's table.
func CreateItemTable(t testing.TB, client *dynamodb.Client, name string, s contract.Schema) {
	t.Helper()
	in := &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(s.PartitionKey), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(s.PartitionKey), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	}
	if !s.NoSortKey {
		in.AttributeDefinitions = append(in.AttributeDefinitions,
			types.AttributeDefinition{AttributeName: aws.String(s.SortKey), AttributeType: types.ScalarAttributeTypeS})
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String(s.SortKey), KeyType: types.KeyTypeRange})
	}
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	if err := createTable(ctx, client, in); err != nil {
		t.Fatal(err)
	}
}

// CreateArmedItemTable creates a table like CreateItemTable with the
// armed index x (defaults filled for s) as the constructs add it: keyed by
// x.PartitionAttr and the due attribute, projecting x.Projected.
func CreateArmedItemTable(t testing.TB, client *dynamodb.Client, name string, s contract.Schema, x armedindex.Spec) {
	t.Helper()
	x = x.WithDefaults(s)
	in := &dynamodb.CreateTableInput{
		TableName: aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(s.PartitionKey), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(x.PartitionAttr), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(s.DueAttr), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema:   []types.KeySchemaElement{{AttributeName: aws.String(s.PartitionKey), KeyType: types.KeyTypeHash}},
		BillingMode: types.BillingModePayPerRequest,
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName: aws.String(x.Name),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String(x.PartitionAttr), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String(s.DueAttr), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: x.Projected(s)},
		}},
	}
	if !s.NoSortKey {
		in.AttributeDefinitions = append(in.AttributeDefinitions,
			types.AttributeDefinition{AttributeName: aws.String(s.SortKey), AttributeType: types.ScalarAttributeTypeS})
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String(s.SortKey), KeyType: types.KeyTypeRange})
	}
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	if err := createTable(ctx, client, in); err != nil {
		t.Fatal(err)
	}
}

func createTable(ctx context.Context, client *dynamodb.Client, in *dynamodb.CreateTableInput) error {
	name := aws.ToString(in.TableName)
	if _, err := client.CreateTable(ctx, in); err != nil {
		return fmt.Errorf("create table %s: %w", name, err)
	}
	for {
		out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			return fmt.Errorf("describe table %s: %w", name, err)
		}
		if active(out.Table) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("table %s not active: %w", name, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func active(d *types.TableDescription) bool {
	if d.TableStatus != types.TableStatusActive {
		return false
	}
	for _, g := range d.GlobalSecondaryIndexes {
		if g.IndexStatus != types.IndexStatusActive {
			return false
		}
	}
	return true
}
