package testenv

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// RunWithDynalite is a TestMain body for a package whose tests share one
// dynalite: it starts the server, stores its endpoint in *endpoint, runs
// the tests and stops it. Without dynalite installed the package is
// skipped with a message, except under CI=true, where it fails.
//
//	func TestMain(m *testing.M) { os.Exit(testenv.RunWithDynalite(m, &endpoint)) }
func RunWithDynalite(m *testing.M, endpoint *string) int {
	d, err := LaunchDynalite()
	if err != nil {
		if os.Getenv("CI") == "true" {
			fmt.Fprintln(os.Stderr, "FAILED: CI=true, so the dynalite tests must run:", err)
			return 1
		}
		fmt.Fprintln(os.Stderr, "SKIPPED: the dynalite tests:", err)
		return 0
	}
	defer d.Stop()
	*endpoint = d.Endpoint
	return m.Run()
}

// CreateTable creates the table in and waits until it is ACTIVE (dynalite
// activates a table just after answering CreateTable).
func CreateTable(t testing.TB, client *dynamodb.Client, in *dynamodb.CreateTableInput) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	if _, err := client.CreateTable(ctx, in); err != nil {
		t.Fatalf("create table %s: %v", aws.ToString(in.TableName), err)
	}
	w := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) { o.MinDelay = 10 * time.Millisecond })
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: in.TableName}, StartTimeout); err != nil {
		t.Fatalf("table %s not active: %v", aws.ToString(in.TableName), err)
	}
}
