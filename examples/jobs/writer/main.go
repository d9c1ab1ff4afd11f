// Command writer is the jobs example's writer: it queues, moves, cancels
// and deletes jobs with plain DynamoDB calls (PutItem, UpdateItem,
// DeleteItem) using the contract's attribute names, no client of this
// library. The table's stream does the rest: a Queued job gets its
// schedule, a new runAt moves it, Done or a delete cancels it.
//
//	go run ./examples/jobs/writer -table <TableName> -tenant acme -job j1 -in 10m
//	go run ./examples/jobs/writer -table <TableName> -tenant acme -job j1 -in 30m   # move
//	go run ./examples/jobs/writer -table <TableName> -tenant acme -job j1 -done     # cancel
//	go run ./examples/jobs/writer -table <TableName> -tenant acme -job j1 -delete   # cancel
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/examples/jobs/jobschema"
)

// Writer is the part of the DynamoDB client the writer uses.
type Writer interface {
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func key(tenant, job string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{jobschema.Tenant: s(tenant), jobschema.Job: s(job)}
}

// Queue puts a Queued job due at runAt (a new job, or a new runAt for an
// existing one: the stream moves its schedule).
func Queue(ctx context.Context, db Writer, table, tenant, job string, runAt time.Time) error {
	item := key(tenant, job)
	item[jobschema.Status] = s(jobschema.Queued)
	item[jobschema.RunAt] = s(contract.FormatTime(runAt))
	_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item})
	return err
}

// Finish moves a job out of the armed states: its schedule is cancelled.
// Done is also the state the library's claim writes; without the claim's
// mark (jobschema.Schema.ClaimAtAttr), the pipeline reads this write as a completion
// and the job's target never runs (contract.Schema.IsClaim, TakeOver).
func Finish(ctx context.Context, db Writer, table, tenant, job string) error {
	_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(table), Key: key(tenant, job),
		UpdateExpression:          aws.String("SET #s = :done"),
		ExpressionAttributeNames:  map[string]string{"#s": jobschema.Status}, // status is a reserved word
		ExpressionAttributeValues: map[string]types.AttributeValue{":done": s(jobschema.Done)},
	})
	return err
}

// Delete removes a job: its schedule is cancelled.
func Delete(ctx context.Context, db Writer, table, tenant, job string) error {
	_, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key(tenant, job)})
	return err
}

func main() {
	table := flag.String("table", "", "the jobs table (the stack's TableName output)")
	tenant := flag.String("tenant", "", "tenant id")
	job := flag.String("job", "", "job id")
	in := flag.Duration("in", 0, "queue the job to run this long from now (or move it)")
	done := flag.Bool("done", false, "mark the job Done (cancels its schedule)")
	del := flag.Bool("delete", false, "delete the job (cancels its schedule)")
	flag.Parse()
	if *table == "" || *tenant == "" || *job == "" || (*in <= 0) == !(*done || *del) {
		fmt.Fprintln(os.Stderr, "usage: writer -table T -tenant X -job Y (-in 10m | -done | -delete)")
		os.Exit(2)
	}
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "writer:", err)
		os.Exit(1)
	}
	db := dynamodb.NewFromConfig(cfg)
	switch {
	case *done:
		err = Finish(ctx, db, *table, *tenant, *job)
	case *del:
		err = Delete(ctx, db, *table, *tenant, *job)
	default:
		err = Queue(ctx, db, *table, *tenant, *job, time.Now().Add(*in))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "writer:", err)
		os.Exit(1)
	}
}
