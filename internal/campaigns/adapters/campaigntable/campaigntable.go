package campaigntable

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	tk "github.com/unschedule/unschedule/internal/campaigns/tablekeys"
)

// CampaignTableInput is the campaign table as constructs/campaigns declares it
// (keys, the sparse open index, the owner index, on-demand), for the
// endpoint tests and a local run.
func CampaignTableInput(name string) *dynamodb.CreateTableInput {
	str := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	key := func(pk, sk string) []types.KeySchemaElement {
		return []types.KeySchemaElement{{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange}}
	}
	return &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{str(tk.PartitionKey), str(tk.SortKey), str(tk.OpenAttr),
			str(tk.OwnerAttr), str(tk.CreatedAttr)},
		KeySchema: key(tk.PartitionKey, tk.SortKey),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			{IndexName: aws.String(tk.OpenIndex), KeySchema: key(tk.OpenAttr, tk.SortKey),
				Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}},
			{IndexName: aws.String(tk.OwnerIndex), KeySchema: key(tk.OwnerAttr, tk.CreatedAttr),
				Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: tk.OwnerProjection}},
		},
	}
}
