package ops_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/unschedule/unschedule/deferredjobs/job"
	"github.com/unschedule/unschedule/futureevents/futureevent"
	"github.com/unschedule/unschedule/internal/campaigns/adapters/campaigntable"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo/dynamotest"
	"github.com/unschedule/unschedule/internal/ops/opstest"
	"github.com/unschedule/unschedule/internal/todo/todotest"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// servers starts what opstest's stack is built on: the package's moto,
// reset to an empty account, and a fresh dynalite holding the stack's
// tables as the constructs declare them.
func servers(t testing.TB) opstest.Servers {
	t.Helper()
	m := testenv.SharedMoto(t)
	ddb := testenv.DynamoClient(t, testenv.StartDynalite(t))
	todotest.CreateTaskTable(t, ddb, opstest.TaskTable)
	dynamotest.CreateTable(t, ddb, campaigntable.CampaignTableInput(opstest.CampaignTable))
	testenv.CreateItemTable(t, ddb, opstest.FutureEventsTable, futureevent.Schema())
	testenv.CreateItemTable(t, ddb, opstest.DeferredJobsTable, job.Schema())
	return opstest.Servers{DDB: ddb, AWS: aws.Config{Region: testenv.MotoRegion, BaseEndpoint: aws.String(m.Endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDLOCAL", "local-secret", "")}}
}
