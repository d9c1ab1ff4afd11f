// Package eventfilter evaluates a Lambda event filter pattern against an
// event, as Lambda's event source mappings do, for the subset of the
// pattern syntax this project synthesizes: nested objects and arrays of
// exact values (a match is any one value), plus the "exists" and
// "prefix" operators. Any other operator is an error, never a silent
// match, so a test cannot pass on a pattern this matcher does not
// understand.
// https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html#filtering-syntax
package eventfilter

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Match reports whether event (JSON) matches pattern (JSON).
func Match(pattern, event string) (bool, error) {
	var p map[string]any
	if err := json.Unmarshal([]byte(pattern), &p); err != nil {
		return false, fmt.Errorf("eventfilter: pattern: %w", err)
	}
	var e map[string]any
	if err := json.Unmarshal([]byte(event), &e); err != nil {
		return false, fmt.Errorf("eventfilter: event: %w", err)
	}
	return object(p, e)
}

// object: every key of the pattern must match (AND).
func object(p, e map[string]any) (bool, error) {
	for k, pv := range p {
		ev, present := e[k]
		var ok bool
		var err error
		switch pv := pv.(type) {
		case map[string]any:
			sub, isObj := ev.(map[string]any)
			if !present || !isObj {
				return false, nil
			}
			ok, err = object(pv, sub)
		case []any:
			ok, err = values(pv, ev, present)
		default:
			return false, fmt.Errorf("eventfilter: %q: a pattern's leaves are arrays, got %v", k, pv)
		}
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// values: the field matches any one entry (OR). An event field that is
// an array matches when any of its elements does.
func values(p []any, ev any, present bool) (bool, error) {
	if arr, isArr := ev.([]any); isArr {
		for _, x := range arr {
			if ok, err := values(p, x, true); err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	}
	for _, want := range p {
		switch w := want.(type) {
		case map[string]any:
			ok, err := operator(w, ev, present)
			if err != nil || ok {
				return ok, err
			}
		default:
			if present && equal(w, ev) {
				return true, nil
			}
		}
	}
	return false, nil
}

func operator(op map[string]any, ev any, present bool) (bool, error) {
	if len(op) != 1 {
		return false, fmt.Errorf("eventfilter: operator %v: one key expected", op)
	}
	for name, arg := range op {
		switch name {
		case "exists":
			b, ok := arg.(bool)
			if !ok {
				return false, fmt.Errorf("eventfilter: exists takes a boolean")
			}
			return present == b, nil
		case "prefix":
			s, ok := arg.(string)
			v, isStr := ev.(string)
			if !ok {
				return false, fmt.Errorf("eventfilter: prefix takes a string")
			}
			return present && isStr && strings.HasPrefix(v, s), nil
		default:
			return false, fmt.Errorf("eventfilter: operator %q is not supported by this matcher", name)
		}
	}
	return false, nil
}

// equal compares exact values: strings case-sensitively, numbers
// numerically, booleans and null (Lambda matches values exactly).
func equal(want, got any) bool {
	switch w := want.(type) {
	case string:
		g, ok := got.(string)
		return ok && g == w
	case float64:
		g, ok := got.(float64)
		return ok && g == w
	case bool:
		g, ok := got.(bool)
		return ok && g == w
	case nil:
		return got == nil
	}
	return false
}
