package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// args reads a call's arguments. Arguments decoded from JSON arrive as
// float64, bool, string, []any and map[string]any; other decoders may hand
// over ints or json.Number, so the getters accept those too. Type errors are
// *Error of type ErrInvalidParams, worded like gemini-cli's schema
// validation so the model knows which parameter to fix.
type args map[string]any

func (a args) has(name string) bool {
	v, ok := a[name]
	return ok && v != nil
}

func missing(name string) *Error {
	return Errorf(ErrInvalidParams, "params must have required property '%s'", name)
}

func wrongType(name, want string) *Error {
	return Errorf(ErrInvalidParams, "params/%s must be %s", name, want)
}

// str returns a string argument, or "" when it is absent.
func (a args) str(name string) (string, error) {
	v, ok := a[name]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", wrongType(name, "string")
	}
	return s, nil
}

// requiredStr returns a string argument that must be present (it may be
// empty).
func (a args) requiredStr(name string) (string, error) {
	if !a.has(name) {
		return "", missing(name)
	}
	return a.str(name)
}

// boolean returns a boolean argument, or def when it is absent.
func (a args) boolean(name string, def bool) (bool, error) {
	v, ok := a[name]
	if !ok || v == nil {
		return def, nil
	}
	switch b := v.(type) {
	case bool:
		return b, nil
	case string:
		// Some models quote booleans; accept the unambiguous spellings.
		if p, err := strconv.ParseBool(b); err == nil {
			return p, nil
		}
	}
	return false, wrongType(name, "boolean")
}

// integer returns an integer argument and whether it was present.
func (a args) integer(name string) (int, bool, error) {
	v, ok := a[name]
	if !ok || v == nil {
		return 0, false, nil
	}
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case float32:
		f = float64(n)
	case int:
		return n, true, nil
	case int32:
		return int(n), true, nil
	case int64:
		return int(n), true, nil
	case json.Number:
		i, err := n.Int64()
		if err != nil {
			return 0, false, wrongType(name, "integer")
		}
		return int(i), true, nil
	case string:
		i, err := strconv.Atoi(n)
		if err != nil {
			return 0, false, wrongType(name, "integer")
		}
		return i, true, nil
	default:
		return 0, false, wrongType(name, "integer")
	}
	if f != math.Trunc(f) || math.IsInf(f, 0) || math.Abs(f) > math.MaxInt32 {
		return 0, false, wrongType(name, "integer")
	}
	return int(f), true, nil
}

// minInteger returns an integer argument that, when present, is at least
// min.
func (a args) minInteger(name string, min int) (int, bool, error) {
	n, ok, err := a.integer(name)
	if err != nil || !ok {
		return n, ok, err
	}
	if n < min {
		return 0, false, Errorf(ErrInvalidParams, "params/%s must be >= %d", name, min)
	}
	return n, true, nil
}

// strings returns a string-array argument; a lone string is taken as a
// one-element array.
func (a args) strings(name string) ([]string, error) {
	v, ok := a[name]
	if !ok || v == nil {
		return nil, nil
	}
	switch l := v.(type) {
	case string:
		return []string{l}, nil
	case []string:
		return l, nil
	case []any:
		out := make([]string, 0, len(l))
		for i, e := range l {
			s, ok := e.(string)
			if !ok {
				return nil, wrongType(fmt.Sprintf("%s/%d", name, i), "string")
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, wrongType(name, "array")
}

// object returns an object argument, or nil when it is absent.
func (a args) object(name string) (args, error) {
	v, ok := a[name]
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, wrongType(name, "object")
	}
	return args(m), nil
}

// filteringOptions are gemini-cli's file_filtering_options.
type filteringOptions struct {
	gitIgnore, agentryIgnore bool
}

// filtering reads respect_git_ignore and respect_gemini_ignore from a (the
// call's top level for glob, file_filtering_options for the others). Both
// default to true.
func (a args) filtering() (filteringOptions, error) {
	git, err := a.boolean("respect_git_ignore", true)
	if err != nil {
		return filteringOptions{}, err
	}
	gem, err := a.boolean("respect_gemini_ignore", true)
	if err != nil {
		return filteringOptions{}, err
	}
	return filteringOptions{gitIgnore: git, agentryIgnore: gem}, nil
}

// nestedFiltering reads file_filtering_options.
func (a args) nestedFiltering() (filteringOptions, error) {
	o, err := a.object("file_filtering_options")
	if err != nil {
		return filteringOptions{}, err
	}
	return o.filtering()
}

// argString renders an argument for Describe, which must not fail.
func argString(m map[string]any, name string) string {
	switch v := m[name].(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}
