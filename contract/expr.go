package contract

import (
	"strconv"
	"strings"
)

// Expr builds the expressions of one write or query with numbered
// placeholders: #nN, one per distinct attribute name, and :vN, one per
// value. Every name goes through a placeholder, so a reserved word such
// as status never reaches an expression. Names, Values and Numbers are
// the placeholders' maps as DynamoDB takes them (Values strings, Numbers
// numbers), for an input (a Query, a PutItem) that Update does not build.
type Expr struct {
	Names   map[string]string // placeholder -> attribute name
	Values  map[string]string // placeholder -> string value
	Numbers map[string]string // placeholder -> number value, in decimal
	byName  map[string]string // attribute name -> placeholder
	sets    []string
	rems    []string
	adds    []string
}

// NewExpr returns an empty expression.
func NewExpr() *Expr {
	return &Expr{Names: map[string]string{}, Values: map[string]string{}, Numbers: map[string]string{},
		byName: map[string]string{}}
}

// Name returns the placeholder of an attribute name, the same one each
// time.
func (e *Expr) Name(attr string) string {
	if ph, ok := e.byName[attr]; ok {
		return ph
	}
	ph := "#n" + strconv.Itoa(len(e.Names))
	e.Names[ph] = attr
	e.byName[attr] = ph
	return ph
}

// Value returns a fresh placeholder for a string value.
func (e *Expr) Value(v string) string {
	ph := e.nextValue()
	e.Values[ph] = v
	return ph
}

// Number returns a fresh placeholder for a number value (DynamoDB's N).
func (e *Expr) Number(n int64) string {
	ph := e.nextValue()
	e.Numbers[ph] = strconv.FormatInt(n, 10)
	return ph
}

// nextValue is the next :vN, numbered across strings and numbers.
func (e *Expr) nextValue() string { return ":v" + strconv.Itoa(len(e.Values)+len(e.Numbers)) }

// Set adds the clause SET attr = v.
func (e *Expr) Set(attr, v string) { e.sets = append(e.sets, e.Name(attr)+" = "+e.Value(v)) }

// Remove adds the clause REMOVE attr.
func (e *Expr) Remove(attr string) { e.rems = append(e.rems, e.Name(attr)) }

// Add adds the clause ADD attr n: DynamoDB adds n to a number attribute,
// or sets it to n when it is absent, and refuses the write when attr
// holds anything but a number
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html#Expressions.UpdateExpressions.ADD).
func (e *Expr) Add(attr string, n int64) { e.adds = append(e.adds, e.Name(attr)+" "+e.Number(n)) }

// SetOrRemove sets attr to v, or removes it when v is "" (an absent
// attribute is an empty one).
func (e *Expr) SetOrRemove(attr, v string) {
	if v == "" {
		e.Remove(attr)
		return
	}
	e.Set(attr, v)
}

// UpdateExpression is the collected clauses: SET, then REMOVE, then ADD.
func (e *Expr) UpdateExpression() string {
	var clauses []string
	if len(e.sets) > 0 {
		clauses = append(clauses, "SET "+strings.Join(e.sets, ", "))
	}
	if len(e.rems) > 0 {
		clauses = append(clauses, "REMOVE "+strings.Join(e.rems, ", "))
	}
	if len(e.adds) > 0 {
		clauses = append(clauses, "ADD "+strings.Join(e.adds, ", "))
	}
	return strings.Join(clauses, " ")
}

// Update is the conditional write of the collected clauses on the item
// at key.
func (e *Expr) Update(key map[string]string, cond string) Update {
	return Update{Key: key, UpdateExpression: e.UpdateExpression(), ConditionExpression: cond,
		Names: e.Names, Values: e.Values, Numbers: e.Numbers}
}
