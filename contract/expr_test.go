package contract

import (
	"maps"
	"testing"
)

func TestExpr(t *testing.T) {
	cases := []struct {
		name   string
		build  func(e *Expr)
		update string
		names  map[string]string
		values map[string]string
	}{
		{"set and remove", func(e *Expr) { e.Set("status", "open"); e.Remove("firedAt") },
			"SET #n0 = :v0 REMOVE #n1", map[string]string{"#n0": "status", "#n1": "firedAt"}, map[string]string{":v0": "open"}},
		{"a name once, a value each time", func(e *Expr) { e.Set("a", "x"); e.Set("a", "x") },
			"SET #n0 = :v0, #n0 = :v1", map[string]string{"#n0": "a"}, map[string]string{":v0": "x", ":v1": "x"}},
		{"remove only", func(e *Expr) { e.SetOrRemove("a", "") },
			"REMOVE #n0", map[string]string{"#n0": "a"}, map[string]string{}},
		{"set or remove sets", func(e *Expr) { e.SetOrRemove("a", "v") },
			"SET #n0 = :v0", map[string]string{"#n0": "a"}, map[string]string{":v0": "v"}},
		{"nothing", func(*Expr) {}, "", map[string]string{}, map[string]string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := NewExpr()
			c.build(e)
			u := e.Update(map[string]string{"pk": "1"}, "attribute_exists(pk)")
			if u.UpdateExpression != c.update {
				t.Errorf("update %q, want %q", u.UpdateExpression, c.update)
			}
			if !maps.Equal(u.Names, c.names) || !maps.Equal(u.Values, c.values) {
				t.Errorf("names %v values %v, want %v %v", u.Names, u.Values, c.names, c.values)
			}
			if u.ConditionExpression != "attribute_exists(pk)" || u.Key["pk"] != "1" {
				t.Errorf("key or condition lost: %+v", u)
			}
		})
	}
}
