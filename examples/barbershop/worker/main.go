// Command worker is the barbershop example's deferred job: for one shop
// whose weekly window closed, it reads the last 90 days of appointments
// and logs the 7/30/60/90-day report (package analytics).
//
// Environment: APPOINTMENTS_TABLE.
package main

import (
	"context"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/deferredjobs/job"
	"github.com/unschedule/unschedule/examples/barbershop/analytics"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
)

func main() {
	log := lambdaenv.Logger()
	env := lambdaenv.New(os.Getenv)
	table := env.Require("APPOINTMENTS_TABLE")
	lambdaenv.Must(0, env.Err())
	db := dynamodb.NewFromConfig(lambdaenv.Must(config.LoadDefaultConfig(context.Background())))
	lambda.Start(func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, m := range ev.Records {
			j, err := job.ParseJob(m.Body)
			if err != nil {
				log.Error("not a job", "messageId", m.MessageId, "error", err)
				continue // never succeeds: dropping it beats the dead-letter queue
			}
			appts, err := load(ctx, db, table, j)
			if err != nil {
				log.Error("load appointments", "shop", j.Tenant, "error", err)
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
				continue
			}
			log.Info("weekly analytics", "report", analytics.Compute(j.Tenant, j.Window, appts))
		}
		return resp, nil
	})
}

// load reads the shop's appointments of the 90 days before the window.
func load(ctx context.Context, db *dynamodb.Client, table string, j job.Job) ([]analytics.Appointment, error) {
	from := j.Window.AddDate(0, 0, -90).Format(time.RFC3339Nano)
	p := dynamodb.NewQueryPaginator(db, &dynamodb.QueryInput{
		TableName:                aws.String(table),
		KeyConditionExpression:   aws.String("shopId = :s AND #at BETWEEN :from AND :to"),
		ExpressionAttributeNames: map[string]string{"#at": "at"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":s": &types.AttributeValueMemberS{Value: j.Tenant}, ":from": &types.AttributeValueMemberS{Value: from},
			":to": &types.AttributeValueMemberS{Value: j.Window.Format(time.RFC3339Nano)},
		},
	})
	var out []analytics.Appointment
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			a := analytics.Appointment{}
			if v, ok := it["at"].(*types.AttributeValueMemberS); ok {
				a.At, _ = time.Parse(time.RFC3339Nano, v.Value)
			}
			if v, ok := it["barber"].(*types.AttributeValueMemberS); ok {
				a.Barber = v.Value
			}
			if v, ok := it["customerId"].(*types.AttributeValueMemberS); ok {
				a.CustomerID = v.Value
			}
			if v, ok := it["priceCents"].(*types.AttributeValueMemberN); ok {
				a.PriceCents, _ = strconv.ParseInt(v.Value, 10, 64)
			}
			if v, ok := it["noShow"].(*types.AttributeValueMemberBOOL); ok {
				a.NoShow = v.Value
			}
			out = append(out, a)
		}
	}
	return out, nil
}
