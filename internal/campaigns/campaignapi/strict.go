package campaignapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// exactNames refuses a field name that matches one of t's only when case
// is ignored (encoding/json matches names case-insensitively, so
// {"Subject": ...} would set subject), at every depth. raw is known to
// decode into t.
func exactNames(raw json.RawMessage, t reflect.Type, path string) error {
	switch t.Kind() {
	case reflect.Slice:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil // null
		}
		for i, it := range items {
			if err := exactNames(it, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Struct:
		var fields map[string]json.RawMessage
		if json.Unmarshal(raw, &fields) != nil {
			return nil // null
		}
		known := map[string]reflect.Type{}
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			known[name] = t.Field(i).Type
		}
		for name, v := range fields {
			ft, ok := known[name]
			if !ok && path == "" {
				return fmt.Errorf("unknown field %q: field names are case-sensitive", name)
			}
			if !ok {
				return fmt.Errorf("unknown field %q in %s: field names are case-sensitive", name, path)
			}
			if err := exactNames(v, ft, strings.TrimPrefix(path+"."+name, ".")); err != nil {
				return err
			}
		}
	}
	return nil
}
