package eventfilter

import "testing"

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		name, pattern, event string
		want, wantErr        bool
	}{
		{"exact", `{"a":["x"]}`, `{"a":"x"}`, true, false},
		{"one of", `{"a":["x","y"]}`, `{"a":"y"}`, true, false},
		{"case-sensitive", `{"a":["x"]}`, `{"a":"X"}`, false, false},
		{"missing field", `{"a":["x"]}`, `{"b":"x"}`, false, false},
		{"nested AND", `{"u":{"t":["S"],"p":["d"]}}`, `{"u":{"t":"S","p":"d"}}`, true, false},
		{"nested, one differs", `{"u":{"t":["S"],"p":["d"]}}`, `{"u":{"t":"S","p":"e"}}`, false, false},
		{"nested object missing", `{"u":{"t":["S"]}}`, `{"x":1}`, false, false},
		{"nested but a string", `{"u":{"t":["S"]}}`, `{"u":"S"}`, false, false},
		{"number", `{"n":[3]}`, `{"n":3}`, true, false},
		{"number is not a string", `{"n":["3"]}`, `{"n":3}`, false, false},
		{"array field: any element", `{"a":["x"]}`, `{"a":["y","x"]}`, true, false},
		{"exists true", `{"a":[{"exists":true}]}`, `{"a":"q"}`, true, false},
		{"exists false", `{"a":[{"exists":false}]}`, `{"b":"q"}`, true, false},
		{"prefix", `{"a":[{"prefix":"dyn"}]}`, `{"a":"dynamodb"}`, true, false},
		{"unknown operator is an error", `{"a":[{"anything-but":["x"]}]}`, `{"a":"y"}`, false, true},
		{"leaf not an array is an error", `{"a":"x"}`, `{"a":"x"}`, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Match(tc.pattern, tc.event)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("Match = %v, %v; want %v (error %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
