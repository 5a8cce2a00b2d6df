package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// kind is the type of a settings value as the user writes it.
type kind int

const (
	kindObject kind = iota
	kindString
	kindInt
	kindFloat
	kindBool
	kindStrings
	kindJSON // a structured value (a list of objects, a map), taken whole
)

// expected is the phrase used in "must be ..." messages.
func (k kind) expected() string {
	switch k {
	case kindString:
		return "a string"
	case kindInt:
		return "an integer"
	case kindFloat:
		return "a number"
	case kindBool:
		return "a boolean"
	case kindStrings:
		return "a list of strings"
	case kindJSON:
		return "a JSON value of the documented shape"
	default:
		return "an object"
	}
}

// node is one key of the settings schema, derived from the json tags of
// Settings so that the struct stays the single definition of the keys.
type node struct {
	key    string           // dotted key; "" for the root
	kind   kind             // type of the value
	fields map[string]*node // children by json name, for objects
	index  []int            // field index path from Settings
	typ    reflect.Type     // the field's type
}

// schema is the settings schema: the tree and its leaves in key order.
type schema struct {
	root   *node
	leaves []*node
	byKey  map[string]*node
}

// newSchema builds the schema of Settings. It is rebuilt on every Load
// rather than cached in a package variable: it is cheap and keeps the
// package free of mutable state.
func newSchema() *schema {
	s := &schema{byKey: map[string]*node{}}
	s.root = s.build(reflect.TypeOf(Settings{}), "", nil)
	sort.Slice(s.leaves, func(i, j int) bool { return s.leaves[i].key < s.leaves[j].key })
	return s
}

func (s *schema) build(t reflect.Type, key string, index []int) *node {
	n := &node{key: key, index: index, typ: t}
	switch {
	case t.Kind() == reflect.Struct:
		n.kind = kindObject
		n.fields = map[string]*node{}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" || !f.IsExported() {
				continue // derived fields cannot be set by the user
			}
			childKey := name
			if key != "" {
				childKey = key + "." + name
			}
			n.fields[name] = s.build(f.Type, childKey, append(append([]int(nil), index...), i))
		}
	case t.Kind() == reflect.String:
		n.kind = kindString
	case t.Kind() == reflect.Bool:
		n.kind = kindBool
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		n.kind = kindInt
	case t.Kind() == reflect.Float64:
		n.kind = kindFloat
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		n.kind = kindStrings
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Map:
		// Structured values do not go through viper, whose keys are
		// case-insensitive: model names and JSON field names must keep
		// their case. A layer replaces the whole value.
		n.kind = kindJSON
	default:
		// A new field of an unsupported type is a programming error that
		// the tests catch on the first run.
		panic(fmt.Sprintf("config: settings key %q has unsupported type %s", key, t))
	}
	if key != "" {
		s.byKey[key] = n
	}
	if n.kind != kindObject {
		s.leaves = append(s.leaves, n)
	}
	return n
}

// flatten returns the leaf values of st by dotted key.
func (s *schema) flatten(st *Settings) map[string]any {
	v := reflect.ValueOf(st).Elem()
	out := make(map[string]any, len(s.leaves))
	for _, n := range s.leaves {
		if n.kind == kindJSON {
			continue
		}
		out[n.key] = v.FieldByIndex(n.index).Interface()
	}
	return out
}

// splitJSON moves the structured values out of a layer's values.
func (s *schema) splitJSON(values map[string]any, into map[string]any) map[string]any {
	plain := make(map[string]any, len(values))
	for k, v := range values {
		if n := s.byKey[k]; n != nil && n.kind == kindJSON {
			into[k] = v
			continue
		}
		plain[k] = v
	}
	return plain
}

// setJSON stores the structured values in st.
func (s *schema) setJSON(st *Settings, values map[string]any) {
	v := reflect.ValueOf(st).Elem()
	for k, val := range values {
		v.FieldByIndex(s.byKey[k].index).Set(reflect.ValueOf(val))
	}
}

// decodeJSON decodes raw into a new value of n's type, rejecting unknown
// fields so that a misspelt field is an error rather than ignored.
func decodeJSON(n *node, raw []byte) (any, error) {
	ptr := reflect.New(n.typ)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(ptr.Interface()); err != nil {
		return nil, err
	}
	return ptr.Elem().Interface(), nil
}

// sortedKeys returns the keys of m in order, for deterministic errors.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// nest turns dotted keys into the nested maps viper merges.
func nest(flat map[string]any) map[string]any {
	out := map[string]any{}
	for key, v := range flat {
		parts := strings.Split(key, ".")
		m := out
		for _, p := range parts[:len(parts)-1] {
			child, ok := m[p].(map[string]any)
			if !ok {
				child = map[string]any{}
				m[p] = child
			}
			m = child
		}
		m[parts[len(parts)-1]] = v
	}
	return out
}

// suggest returns the known key closest to the unknown name found under
// parent, or "". It looks first among the siblings, then at every key of the
// schema, so that a key placed at the wrong level ("maxSessionTurns" at the
// top) is also found.
func (s *schema) suggest(parent *node, name string) string {
	lname := strings.ToLower(name)
	limit := max(1, len(name)/3)
	best, bestDist := "", limit+1
	try := func(n *node, seg string) {
		if d := editDistance(lname, strings.ToLower(seg)); d < bestDist {
			best, bestDist = n.key, d
		}
	}
	for _, seg := range sortedKeys(parent.fields) {
		try(parent.fields[seg], seg)
	}
	if best != "" {
		return best
	}
	for _, key := range sortedKeys(s.byKey) {
		try(s.byKey[key], key[strings.LastIndex(key, ".")+1:])
	}
	return best
}

// editDistance is the optimal string alignment distance: Levenshtein plus
// transposition of adjacent characters, the commonest typo ("nmae").
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
