package masking

// gemini-cli measures text and JSON as JavaScript does. These exports let
// its other ports (compression) measure the same way instead of keeping
// their own copies of the rules.

// JSONLength is JSON.stringify(v).length: the length of v's JSON in UTF-16
// code units, with JavaScript's escaping (HTML characters, U+2028 and
// U+2029 left alone). Structs encode as encoding/json encodes them.
func JSONLength(v any) int { return jsonLen(v) }

// PrettyJSON is JSON.stringify(v, null, 2).
func PrettyJSON(v any) string { return string(appendJSON(nil, v, true)) }

// TrimJS is JavaScript's String.prototype.trim: U+FEFF is white space to
// it, U+0085 is not.
func TrimJS(s string) string { return jsTrim(s) }

// UTF16Len is JavaScript's s.length: the length of s in UTF-16 code units
// (an invalid UTF-8 byte counts as one U+FFFD).
func UTF16Len(s string) int { return utf16Len(s) }

// UTF16Head is JavaScript's s.slice(0, n), with a surrogate pair cut in half
// written as U+FFFD, as Node writes a lone surrogate.
func UTF16Head(s string, n int) string { return utf16Head(s, n) }

// IsJSSpace reports whether r is white space to JavaScript's trim.
func IsJSSpace(r rune) bool { return jsSpace(r) }
