package layers

import (
	"encoding/json"
	"fmt"
)

// MatchFilter evaluates a Lambda event filter pattern against one event
// record (both JSON), for the subset of the pattern syntax this package
// writes: nested objects, arrays of literal values (equality, any of
// them), and {"exists": true|false}. A pattern that uses anything else is
// an error, so the evaluation never silently approves a pattern it does
// not understand. Semantics as documented for Lambda event filtering:
// every key of the pattern must match (AND), the values of one array are
// alternatives (OR), and a field missing from the event matches only
// {"exists": false}.
// https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html
func MatchFilter(pattern, event []byte) (bool, error) {
	var p, e map[string]any
	if err := json.Unmarshal(pattern, &p); err != nil {
		return false, fmt.Errorf("filter pattern: %w", err)
	}
	if err := json.Unmarshal(event, &e); err != nil {
		return false, fmt.Errorf("event: %w", err)
	}
	return matchObject(p, e)
}

func matchObject(p, e map[string]any) (bool, error) {
	for k, pv := range p {
		ev, present := e[k]
		switch pv := pv.(type) {
		case map[string]any:
			sub, ok := ev.(map[string]any)
			if !present || !ok {
				return false, nil
			}
			if m, err := matchObject(pv, sub); err != nil || !m {
				return false, err
			}
		case []any:
			m, err := matchAny(pv, ev, present)
			if err != nil || !m {
				return false, err
			}
		default:
			return false, fmt.Errorf("filter pattern: %q must be an object or an array (given %v)", k, pv)
		}
	}
	return true, nil
}

// matchAny reports whether the event value matches one of the
// alternatives.
func matchAny(alts []any, ev any, present bool) (bool, error) {
	for _, a := range alts {
		switch a := a.(type) {
		case map[string]any:
			want, ok := a["exists"].(bool)
			if len(a) != 1 || !ok {
				return false, fmt.Errorf("filter pattern: only {\"exists\": bool} is supported as an operator (given %v)", a)
			}
			if want == (present && ev != nil) {
				return true, nil
			}
		case []any:
			return false, fmt.Errorf("filter pattern: nested arrays are not a pattern (given %v)", a)
		default:
			if !present {
				continue
			}
			if vs, ok := ev.([]any); ok {
				for _, v := range vs {
					if v == a {
						return true, nil
					}
				}
				continue
			}
			if ev == a {
				return true, nil
			}
		}
	}
	return false, nil
}
