package masking

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentry-dev/agentry/internal/jsonstr"
)

// gemini-cli sizes a function response by the length of
// JSON.stringify(response) and spills JSON.stringify(response, null, 2).
// encoding/json differs from JavaScript in ways that change both: it
// escapes <, > and & (which would also hide the <tool_output_masked> tag),
// and U+2028 and U+2029. So responses are encoded here as JavaScript
// would, and measured in UTF-16 code units without building the text.
// Object keys come out as JavaScript enumerates them, array indexes first,
// then the rest sorted: a Go map has no insertion order to keep.

// jsonLen returns JSON.stringify(v).length.
func jsonLen(v any) int {
	switch v := v.(type) {
	case nil:
		return 4
	case string:
		return stringJSONLen(v)
	case bool:
		if v {
			return 4
		}
		return 5
	case float64:
		return len(appendNumber(nil, v))
	case map[string]any:
		n := 2
		for k, e := range v {
			n += stringJSONLen(k) + 1 + jsonLen(e) + 1
		}
		if len(v) > 0 {
			n-- // no comma after the last member
		}
		return n
	case []any:
		n := 2
		for _, e := range v {
			n += jsonLen(e) + 1
		}
		if len(v) > 0 {
			n--
		}
		return n
	}
	if s, ok := scalar(v); ok {
		return len(s) // numbers and literals are ASCII
	}
	return jsonLen(normalize(v))
}

// stringJSONLen is the length of s as a JSON string literal, quotes
// included, in UTF-16 code units. ASCII is counted eight bytes at a time,
// escapes included, as long as the only control characters are newlines
// and tabs: the shape of tool output.
func stringJSONLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			if x := load64(s[i:]); x&msb == 0 {
				esc := equal8(x, '"') | equal8(x, '\\')
				ctl := below8(x, 0x20)
				short := equal8(x, '\n') | equal8(x, '\t')
				if ctl&^short == 0 {
					n += 8 + bits.OnesCount64(esc|short)
					i += 8
					continue
				}
			}
		}
		// Non-ASCII or a rarer control character: one step by hand.
		b := s[i]
		if b < utf8.RuneSelf {
			n += escapedLen(b)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += units(r)
		i += size
	}
	return n
}

// equal8 flags exactly, in the high bit of each byte, the bytes of x equal
// to c; x must be ASCII.
func equal8(x uint64, c byte) uint64 {
	t := x ^ (lsb * uint64(c))
	return ^((t & low7) + low7 | t) & msb
}

// below8 flags exactly the bytes of x below c; x must be ASCII.
func below8(x uint64, c byte) uint64 {
	return ^(x + lsb*uint64(0x80-c)) & msb
}

const (
	lsb  = 0x0101010101010101
	msb  = 0x8080808080808080
	low7 = 0x7F7F7F7F7F7F7F7F
)

// escapedLen is the JSON-encoded length of ASCII byte b.
func escapedLen(b byte) int {
	switch {
	case b == '"' || b == '\\':
		return 2
	case b >= 0x20:
		return 1
	case b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
		return 2
	}
	return 6
}

// appendJSON appends v encoded as JSON.stringify(v) does, or as
// JSON.stringify(v, null, 2) when pretty is set.
func appendJSON(dst []byte, v any, pretty bool) []byte {
	return appendValue(dst, v, pretty, 0)
}

func appendValue(dst []byte, v any, pretty bool, depth int) []byte {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...)
	case string:
		return appendString(dst, v)
	case bool:
		return strconv.AppendBool(dst, v)
	case float64:
		return appendNumber(dst, v)
	case map[string]any:
		if len(v) == 0 {
			return append(dst, "{}"...)
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareKeys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = newline(dst, pretty, depth+1)
			dst = appendString(dst, k)
			dst = append(dst, ':')
			if pretty {
				dst = append(dst, ' ')
			}
			dst = appendValue(dst, v[k], pretty, depth+1)
		}
		dst = newline(dst, pretty, depth)
		return append(dst, '}')
	case []any:
		if len(v) == 0 {
			return append(dst, "[]"...)
		}
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = newline(dst, pretty, depth+1)
			dst = appendValue(dst, e, pretty, depth+1)
		}
		dst = newline(dst, pretty, depth)
		return append(dst, ']')
	}
	if s, ok := scalar(v); ok {
		return append(dst, s...)
	}
	return appendValue(dst, normalize(v), pretty, depth)
}

// compareKeys orders object keys as JavaScript enumerates them: array
// index keys ("0", "17") first in numeric order, then the others — which
// JavaScript keeps in insertion order, lost in a Go map, so sorted here.
func compareKeys(a, b string) int {
	ai, aIdx := arrayIndex(a)
	bi, bIdx := arrayIndex(b)
	switch {
	case aIdx && bIdx:
		return cmp.Compare(ai, bi)
	case aIdx:
		return -1
	case bIdx:
		return 1
	}
	return strings.Compare(a, b)
}

// arrayIndex reports whether k is a canonical array index, 0 to 2^32-2.
func arrayIndex(k string) (uint64, bool) {
	if k == "" || len(k) > 10 || (len(k) > 1 && k[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(k, 10, 64)
	if err != nil || n >= 1<<32-1 {
		return 0, false
	}
	return n, true
}

// sizeHint guesses the byte length of v's indented JSON, so that encoding
// a large response allocates its buffer once.
func sizeHint(v any) int {
	switch v := v.(type) {
	case string:
		return len(v) + len(v)/16 + 2
	case map[string]any:
		n := 2
		for k, e := range v {
			n += len(k) + 8 + sizeHint(e)
		}
		return n
	case []any:
		n := 2
		for _, e := range v {
			n += 4 + sizeHint(e)
		}
		return n
	}
	return 16
}

// newline starts a pretty-printed line indented two spaces a level.
func newline(dst []byte, pretty bool, depth int) []byte {
	if !pretty {
		return dst
	}
	dst = append(dst, '\n')
	for range depth {
		dst = append(dst, "  "...)
	}
	return dst
}

// appendString appends s as a JSON string literal, escaped as
// JSON.stringify escapes: quote, backslash and control characters only.
// Invalid UTF-8 bytes become U+FFFD.
func appendString(dst []byte, s string) []byte { return jsonstr.Append(dst, s, jsonstr.JS) }

// appendNumber appends f as JavaScript's Number.prototype.toString, which
// JSON.stringify uses for finite numbers; NaN and infinities are null.
func appendNumber(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	return appendJSNumber(dst, f)
}

// appendJSNumber appends f as JavaScript's String(f).
func appendJSNumber(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		return append(dst, '0') // also -0
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	// Exponent form: 1e+21, 1.5e-7 (Go writes e-07).
	n := len(dst)
	dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
	if i := bytes.IndexByte(dst[n:], 'e'); i >= 0 {
		e := n + i + 2 // after "e+" or "e-"
		if e+1 < len(dst) && dst[e] == '0' {
			dst = append(dst[:e], dst[e+1:]...)
		}
	}
	return dst
}

// scalar returns the JSON text of numbers other than float64, json.Number
// and nil pointers.
func scalar(v any) (string, bool) {
	switch v := v.(type) {
	case int:
		return strconv.FormatInt(int64(v), 10), true
	case int8:
		return strconv.FormatInt(int64(v), 10), true
	case int16:
		return strconv.FormatInt(int64(v), 10), true
	case int32:
		return strconv.FormatInt(int64(v), 10), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case uint:
		return strconv.FormatUint(uint64(v), 10), true
	case uint8:
		return strconv.FormatUint(uint64(v), 10), true
	case uint16:
		return strconv.FormatUint(uint64(v), 10), true
	case uint32:
		return strconv.FormatUint(uint64(v), 10), true
	case uint64:
		return strconv.FormatUint(v, 10), true
	case float32:
		return string(appendNumber(nil, float64(v))), true
	case json.Number:
		if f, err := v.Float64(); err == nil {
			return string(appendNumber(nil, f)), true
		}
		return string(v), true
	}
	return "", false
}

// normalize turns any other value into the generic JSON tree (nil, string,
// bool, float64, map[string]any, []any) through encoding/json, so structs,
// typed maps and slices, and json.Marshaler values encode as they would
// have reached gemini-cli: as JSON. A value encoding/json rejects becomes
// null, as JSON.stringify drops what it cannot encode.
func normalize(v any) any {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil
		}
	}
	if _, isMarshaler := v.(json.Marshaler); !isMarshaler {
		switch rv.Kind() {
		case reflect.Slice, reflect.Array:
			if rv.Kind() == reflect.Slice && rv.IsNil() {
				return nil
			}
			if rv.Type().Elem().Kind() != reflect.Uint8 {
				out := make([]any, rv.Len())
				for i := range out {
					out[i] = rv.Index(i).Interface()
				}
				return out
			}
		case reflect.Map:
			if rv.Type().Key().Kind() == reflect.String {
				if rv.IsNil() {
					return nil
				}
				out := make(map[string]any, rv.Len())
				for it := rv.MapRange(); it.Next(); {
					out[it.Key().String()] = it.Value().Interface()
				}
				return out
			}
		case reflect.String:
			return rv.String()
		case reflect.Bool:
			return rv.Bool()
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil
	}
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil
	}
	return out
}

// maskedTag opens a masked response; its presence anywhere in a response's
// JSON marks the response as masked already.
const maskedTag = "<" + MaskingIndicatorTag

// hasMaskedTag reports whether JSON.stringify(v, null, 2) contains
// "<tool_output_masked", as gemini-cli's isAlreadyMasked asks. The tag holds
// no character JSON escapes, so it occurs in the JSON text exactly when it
// occurs in one of the strings, keys included.
func hasMaskedTag(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.Contains(v, maskedTag)
	case map[string]any:
		for k, e := range v {
			if strings.Contains(k, maskedTag) || hasMaskedTag(e) {
				return true
			}
		}
		return false
	case []any:
		for _, e := range v {
			if hasMaskedTag(e) {
				return true
			}
		}
		return false
	case nil, bool, float64:
		return false
	}
	if _, ok := scalar(v); ok {
		return false
	}
	return hasMaskedTag(normalize(v))
}
