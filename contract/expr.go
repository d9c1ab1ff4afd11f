package contract

import (
	"strconv"
	"strings"
)

// Expr builds the expressions of one write or query with numbered
// placeholders: #nN, one per distinct attribute name, and :vN, one per
// value. Every name goes through a placeholder, so a reserved word such
// as status never reaches an expression. Names and Values are the
// placeholders' maps as DynamoDB takes them, for an input (a Query, a
// PutItem) that Update does not build.
type Expr struct {
	Names  map[string]string // placeholder -> attribute name
	Values map[string]string // placeholder -> value
	byName map[string]string // attribute name -> placeholder
	sets   []string
	rems   []string
}

// NewExpr returns an empty expression.
func NewExpr() *Expr {
	return &Expr{Names: map[string]string{}, Values: map[string]string{}, byName: map[string]string{}}
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
	ph := ":v" + strconv.Itoa(len(e.Values))
	e.Values[ph] = v
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

// UpdateExpression is the collected clauses: SET, then REMOVE.
func (e *Expr) UpdateExpression() string {
	var clauses []string
	if len(e.sets) > 0 {
		clauses = append(clauses, "SET "+strings.Join(e.sets, ", "))
	}
	if len(e.rems) > 0 {
		clauses = append(clauses, "REMOVE "+strings.Join(e.rems, ", "))
	}
	return strings.Join(clauses, " ")
}

// Update is the conditional write of the collected clauses on the item
// at key.
func (e *Expr) Update(key map[string]string, cond string) Update {
	return Update{Key: key, UpdateExpression: e.UpdateExpression(), ConditionExpression: cond,
		Names: e.Names, Values: e.Values}
}
