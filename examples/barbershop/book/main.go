// Command book is the barbershop example's activity: it books an
// appointment ({"shop","at","barber","priceCents","customerId"}) and marks
// the shop active, so its analytics run when the week's window closes.
//
// Environment: APPOINTMENTS_TABLE, and DEFERRED_JOBS_TABLE /
// DEFERRED_JOBS_WEEKLY (set by the construct's ConfigureWriter).
package main

import (
	"context"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/deferredjobs/writer"
	"github.com/unschedule/unschedule/examples/barbershop/analytics"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
)

// Booking is the request.
type Booking struct {
	Shop string `json:"shop"`
	analytics.Appointment
}

func main() {
	env := lambdaenv.New(os.Getenv)
	table := env.Require("APPOINTMENTS_TABLE")
	lambdaenv.Must(0, env.Err())
	cfg := lambdaenv.Must(config.LoadDefaultConfig(context.Background()))
	db := dynamodb.NewFromConfig(cfg)
	markers := lambdaenv.Must(writer.FromEnv(db))
	lambda.Start(func(ctx context.Context, b Booking) error {
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
			"shopId":     &types.AttributeValueMemberS{Value: b.Shop},
			"at":         &types.AttributeValueMemberS{Value: b.At.UTC().Format(time.RFC3339Nano)},
			"barber":     &types.AttributeValueMemberS{Value: b.Barber},
			"customerId": &types.AttributeValueMemberS{Value: b.CustomerID},
			"priceCents": &types.AttributeValueMemberN{Value: strconv.FormatInt(b.PriceCents, 10)},
		}}); err != nil {
			return err
		}
		_, err := markers.MarkActivity(ctx, b.Shop)
		return err
	})
}
