package dynamo

import (
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Expr collects the names, values and clauses of one expression. Every
// attribute name goes through a placeholder, so reserved words such as
// status never reach the expression. Names and Values are the
// placeholders' maps, for an input (a Query, a Scan, a PutItem) that
// Update does not build.
type Expr struct {
	Names  map[string]string
	Values map[string]types.AttributeValue
	sets   []string
	rems   []string
}

// NewExpr returns an empty expression.
func NewExpr() *Expr {
	return &Expr{Names: map[string]string{}, Values: map[string]types.AttributeValue{}}
}

// Name returns the placeholder of an attribute name.
func (e *Expr) Name(attr string) string {
	for ph, a := range e.Names {
		if a == attr {
			return ph
		}
	}
	ph := "#n" + strconv.Itoa(len(e.Names))
	e.Names[ph] = attr
	return ph
}

// Value returns a fresh placeholder for a string value.
func (e *Expr) Value(v string) string {
	ph := ":v" + strconv.Itoa(len(e.Values))
	e.Values[ph] = S(v)
	return ph
}

// Set adds the clause SET attr = v.
func (e *Expr) Set(attr, v string) { e.sets = append(e.sets, e.Name(attr)+" = "+e.Value(v)) }

// Remove adds the clause REMOVE attr.
func (e *Expr) Remove(attr string) { e.rems = append(e.rems, e.Name(attr)) }

// SetOrRemove sets attr to v, or removes it when v is "" (an absent
// attribute is an empty one).
func (e *Expr) SetOrRemove(attr, v string) {
	if v == "" {
		e.Remove(attr)
		return
	}
	e.Set(attr, v)
}

// Update is a conditional UpdateItem of the collected clauses on the
// item at k that returns the new item.
func (e *Expr) Update(table string, k map[string]types.AttributeValue, cond string) *dynamodb.UpdateItemInput {
	var clauses []string
	if len(e.sets) > 0 {
		clauses = append(clauses, "SET "+strings.Join(e.sets, ", "))
	}
	if len(e.rems) > 0 {
		clauses = append(clauses, "REMOVE "+strings.Join(e.rems, ", "))
	}
	in := &dynamodb.UpdateItemInput{
		TableName:                aws.String(table),
		Key:                      k,
		UpdateExpression:         aws.String(strings.Join(clauses, " ")),
		ConditionExpression:      aws.String(cond),
		ExpressionAttributeNames: e.Names,
		ReturnValues:             types.ReturnValueAllNew,
	}
	if len(e.Values) > 0 {
		in.ExpressionAttributeValues = e.Values
	}
	return in
}
