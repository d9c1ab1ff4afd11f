// Package testenv starts the servers that adapter tests run against (a
// dynalite DynamoDB server from the repo's node_modules, moto_server) and
// holds the helpers their tests share: item tables, stream images, the
// project's Node and cfn-lint.
package testenv

import (
	"fmt"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo/dynamotest"
	"github.com/unschedule/unschedule/internal/core/armedindex"
)

// Dynalite is a running in-memory dynalite server.
type Dynalite struct{ *server }

// LaunchDynalite starts an in-memory dynalite on a free loopback port and
// waits until it accepts connections. Call Stop when done. It suits a
// TestMain, where there is no testing.TB; tests use StartDynalite.
func LaunchDynalite() (*Dynalite, error) {
	exe, err := repoBin("dynalite")
	if err != nil {
		return nil, err
	}
	// Tables become ACTIVE at once: the default 500ms per create, update
	// and delete would dominate the tests' run time. Its stdout only says
	// where it listens.
	s, err := startServer("dynalite", exe, os.Stderr, func(port string) []string {
		return []string{"--host", "127.0.0.1", "--port", port, "--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0"}
	})
	if err != nil {
		return nil, err
	}
	return &Dynalite{s}, nil
}

// StartDynalite starts an in-memory dynalite for the test and returns its
// endpoint; the server is killed when the test ends. A package with many
// tests should share one server through RunWithDynalite in TestMain.
func StartDynalite(t testing.TB) (endpoint string) {
	t.Helper()
	d, err := LaunchDynalite()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	return d.Endpoint
}

// RunWithDynalite is a TestMain body for a package whose tests share one
// dynalite: it starts the server, stores its endpoint in *endpoint, runs
// the tests and stops it. Without dynalite installed the package is
// skipped with a message, except under CI=true, where it fails.
//
//	func TestMain(m *testing.M) { os.Exit(testenv.RunWithDynalite(m, &endpoint)) }
func RunWithDynalite(m *testing.M, endpoint *string) int {
	d, err := LaunchDynalite()
	if err != nil && os.Getenv("CI") == "true" {
		fmt.Fprintln(os.Stderr, "FAILED: CI=true, so the dynalite tests must run:", err)
		return 1
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "SKIPPED: the dynalite tests:", err)
		return 0
	}
	defer d.Stop()
	*endpoint = d.Endpoint
	return m.Run()
}

// DynamoClient is a DynamoDB client for a local endpoint, with fake static
// credentials in us-east-1.
func DynamoClient(t testing.TB, endpoint string) *dynamodb.Client {
	t.Helper()
	return NewDynamoClient(endpoint)
}

// NewDynamoClient is DynamoClient without a testing.TB (for TestMain).
func NewDynamoClient(endpoint string) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{Region: MotoRegion, Credentials: localCreds, BaseEndpoint: aws.String(endpoint)})
}

// strAttrs defines each named attribute ("" skipped) as a string.
func strAttrs(names ...string) []types.AttributeDefinition {
	var out []types.AttributeDefinition
	for _, n := range names {
		if n != "" {
			out = append(out, types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS})
		}
	}
	return out
}

// keys is a key schema: a partition key, and a sort key unless "".
func keys(partition, sort string) []types.KeySchemaElement {
	out := []types.KeySchemaElement{{AttributeName: aws.String(partition), KeyType: types.KeyTypeHash}}
	if sort != "" {
		out = append(out, types.KeySchemaElement{AttributeName: aws.String(sort), KeyType: types.KeyTypeRange})
	}
	return out
}

// itemTableInput is a table keyed as schema s says (string keys), with
// the further string attributes attrs for its indexes.
func itemTableInput(name string, s contract.Schema, attrs ...string) *dynamodb.CreateTableInput {
	sort := s.SortKey
	if s.NoSortKey {
		sort = ""
	}
	return &dynamodb.CreateTableInput{TableName: aws.String(name), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: strAttrs(append([]string{s.PartitionKey, sort}, attrs...)...), KeySchema: keys(s.PartitionKey, sort)}
}

// CreateItemTable creates a table keyed as schema s says (string keys, no
// index) and waits until it is ACTIVE: an adopter's table.
func CreateItemTable(t testing.TB, client *dynamodb.Client, name string, s contract.Schema) {
	t.Helper()
	dynamotest.CreateTable(t, client, itemTableInput(name, s))
}

// CreateArmedItemTable creates a table like CreateItemTable with the
// armed index x (defaults filled for s) as the constructs add it: keyed by
// x.PartitionAttr and the due attribute, projecting x.Projected.
func CreateArmedItemTable(t testing.TB, client *dynamodb.Client, name string, s contract.Schema, x armedindex.Spec) {
	t.Helper()
	x = x.WithDefaults(s)
	in := itemTableInput(name, s, x.PartitionAttr, s.DueAttr)
	in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{{IndexName: aws.String(x.Name), KeySchema: keys(x.PartitionAttr, s.DueAttr),
		Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: x.Projected(s)}}}
	dynamotest.CreateTable(t, client, in)
}
