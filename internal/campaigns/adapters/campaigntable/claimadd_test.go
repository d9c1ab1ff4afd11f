package campaigntable

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
)

// The claim's attempt + 1 is the contract's ClaimOptions.Add, and
// DynamoDB applies it as the in-memory store does (see
// contract.TestClaimOptions): an absent attempt becomes 1, a number
// grows by one, and a string is a ValidationException that changes
// nothing, not a refused condition.
func TestClaimAddsToAttempt(t *testing.T) {
	cases := []struct {
		name   string
		stored types.AttributeValue // the attempt before the claim; nil: absent
		want   int                  // the attempt after it; 0: refused
	}{
		{"absent", nil, 1},
		{"a number", &types.AttributeValueMemberN{Value: "4"}, 5},
		{"a string", &types.AttributeValueMemberS{Value: "4"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			st := newCampaignStore(t)
			task := seedActive(t, st, "c1", 1)[0]
			in := &dynamodb.UpdateItemInput{TableName: aws.String(st.table), Key: taskKey(task.Key()),
				UpdateExpression: aws.String("REMOVE #a"), ExpressionAttributeNames: map[string]string{"#a": attrAttempt}}
			if c.stored != nil {
				in.UpdateExpression = aws.String("SET #a = :a")
				in.ExpressionAttributeValues = map[string]types.AttributeValue{":a": c.stored}
			}
			if _, err := st.api.UpdateItem(ctx, in); err != nil {
				t.Fatal(err)
			}
			got, err := st.Claim(ctx, task.Key(), task.SendAt, task.SendAt.Add(time.Second), time.Minute)
			if c.want == 0 {
				if err == nil || errors.Is(err, campaign.ErrConditionFailed) || !strings.Contains(err.Error(), "ValidationException") {
					t.Fatalf("claim of a string attempt: %v, want a ValidationException", err)
				}
				out, err := st.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.table), Key: taskKey(task.Key()), ConsistentRead: aws.Bool(true)})
				if err != nil || out.Item[attrState] == nil || out.Item[attrAttempt] == nil {
					t.Fatalf("get after refusal: %v %v", out, err)
				}
				if s, _ := out.Item[attrAttempt].(*types.AttributeValueMemberS); s == nil || s.Value != "4" {
					t.Fatalf("attempt after refusal %#v, want the string unchanged", out.Item[attrAttempt])
				}
				return
			}
			if err != nil || got.Attempt != c.want || got.State != campaign.Running {
				t.Fatalf("claim: %+v %v, want Running at attempt %d", got, err, c.want)
			}
		})
	}
}
