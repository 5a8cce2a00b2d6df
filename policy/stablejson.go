package policy

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// StableJSON returns the arguments as gemini-cli's stableStringify writes
// them for argsPattern matching: keys sorted (by UTF-16 code units, as
// JavaScript sorts), no whitespace, strings and numbers as JavaScript's
// JSON.stringify writes them, and each top-level key/value pair wrapped in
// NUL characters: {\x00"a":1\x00,\x00"b":"x"\x00}. So \x00"file_path":"…"\x00
// in a pattern matches a top-level argument only.
func StableJSON(args map[string]any) string {
	return string(appendStable(nil, args, true))
}

func appendStable(b []byte, v any, top bool) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return appendJSString(b, x)
	case bool:
		return strconv.AppendBool(b, x)
	case float64:
		return appendJSNumber(b, x)
	case float32:
		return appendJSNumber(b, float64(x))
	case int:
		return appendJSNumber(b, float64(x))
	case int64:
		return appendJSNumber(b, float64(x))
	case int32:
		return appendJSNumber(b, float64(x))
	case uint64:
		return appendJSNumber(b, float64(x))
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return appendJSString(b, string(x))
		}
		return appendJSNumber(b, f)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendStable(b, e, false)
		}
		return append(b, ']')
	case []string:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSString(b, e)
		}
		return append(b, ']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareUTF16)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			if top {
				b = append(b, 0)
			}
			b = appendJSString(b, k)
			b = append(b, ':')
			b = appendStable(b, x[k], false)
			if top {
				b = append(b, 0)
			}
		}
		return append(b, '}')
	}
	// Anything else: through encoding/json into the generic shapes above.
	rv := reflect.ValueOf(v)
	if (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Map || rv.Kind() == reflect.Slice) && rv.IsNil() {
		return append(b, "null"...)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	var g any
	if err := json.Unmarshal(raw, &g); err != nil {
		return append(b, "null"...)
	}
	return appendStable(b, g, top)
}

// compareUTF16 orders strings as JavaScript's default sort does: by UTF-16
// code units (it differs from byte order only above U+FFFF against
// U+E000..U+FFFF).
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ua, ub := utf16Units(ra), utf16Units(rb)
			if ua[0] != ub[0] {
				return int(ua[0]) - int(ub[0])
			}
			return int(ua[1]) - int(ub[1])
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

func utf16Units(r rune) [2]uint16 {
	if r >= 0x10000 {
		h, l := utf16.EncodeRune(r)
		return [2]uint16{uint16(h), uint16(l)}
	}
	return [2]uint16{uint16(r), 0}
}

const hexDigits = "0123456789abcdef"

// appendJSString writes s as JSON.stringify does: only ", \ and control
// characters escaped (\b \f \n \r \t, others \u00xx).
func appendJSString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendJSNumber writes f as JavaScript's Number#toString (NaN and
// infinities as null, as JSON.stringify does).
func appendJSNumber(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if f == 0 {
		return append(b, '0')
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	// Shortest round-trip digits and exponent, laid out as ECMAScript's
	// Number::toString does.
	e := strconv.FormatFloat(math.Abs(f), 'e', -1, 64) // d.ddde±xx
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	n, _ := strconv.Atoi(exp)
	n++ // position of the decimal point after the first digit
	k := len(digits)
	if f < 0 {
		b = append(b, '-')
	}
	switch {
	case k <= n && n <= 21:
		b = append(b, digits...)
		for range n - k {
			b = append(b, '0')
		}
	case 0 < n && n <= 21:
		b = append(b, digits[:n]...)
		b = append(b, '.')
		b = append(b, digits[n:]...)
	case -6 < n && n <= 0:
		b = append(b, '0', '.')
		for range -n {
			b = append(b, '0')
		}
		b = append(b, digits...)
	default:
		b = append(b, digits[0])
		if k > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'e')
		if n-1 >= 0 {
			b = append(b, '+')
		}
		b = strconv.AppendInt(b, int64(n-1), 10)
	}
	return b
}
