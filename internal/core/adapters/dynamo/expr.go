package dynamo

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
)

// Expr is the contract's expression builder (names, values, SET, REMOVE
// and ADD clauses) with the SDK's types: AttrValues for a Query's or a
// PutItem's values, and Update for a whole UpdateItem.
type Expr struct{ *contract.Expr }

// NewExpr returns an empty expression.
func NewExpr() *Expr { return &Expr{contract.NewExpr()} }

// AttrValues are the value placeholders as attribute values (strings,
// and numbers from Add), or nil when there are none: DynamoDB refuses an
// empty map.
func (e *Expr) AttrValues() map[string]types.AttributeValue { return exprValues(e.Values, e.Numbers) }

// exprValues are a contract expression's value placeholders as attribute
// values: strings as S, numbers as N; nil when there are none.
func exprValues(strs, nums map[string]string) map[string]types.AttributeValue {
	if len(strs)+len(nums) == 0 {
		return nil
	}
	out := ToAttrs(strs)
	for ph, n := range nums {
		out[ph] = &types.AttributeValueMemberN{Value: n}
	}
	return out
}

// Update is a conditional UpdateItem of the collected clauses on the
// item at k that returns the new item.
func (e *Expr) Update(table string, k map[string]types.AttributeValue, cond string) *dynamodb.UpdateItemInput {
	return &dynamodb.UpdateItemInput{
		TableName:                 aws.String(table),
		Key:                       k,
		UpdateExpression:          aws.String(e.UpdateExpression()),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  e.Names,
		ExpressionAttributeValues: e.AttrValues(),
		ReturnValues:              types.ReturnValueAllNew,
	}
}
