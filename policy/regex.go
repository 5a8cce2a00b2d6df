package policy

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode/utf16"
)

// jsSpace is JavaScript's \s (WhiteSpace and LineTerminator), as the
// inside of a character class.
const jsSpace = `\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}`

// jsNonSpace is JavaScript's \S as the inside of a character class.
const jsNonSpace = `\x00-\x08\x0e-\x1f\x21-\x{9f}\x{a1}-\x{167f}\x{1681}-\x{1fff}\x{200b}-\x{2027}\x{202a}-\x{202e}\x{2030}-\x{205e}\x{2060}-\x{2fff}\x{3001}-\x{fefe}\x{ff00}-\x{10ffff}`

// nestedQuantifier is gemini-cli's ReDoS heuristic
// /\([^)]*[*+?{].*\)[*+?{]/ (JavaScript's "." excludes line terminators).
var nestedQuantifier = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\([^)]*[*+?{][^\n\r\x{2028}\x{2029}]*\)[*+?{]`) })

// isSafeRegExp is gemini-cli's isSafeRegExp after the pattern compiled: at
// most 2048 UTF-16 code units and no group holding a quantifier followed by
// a quantifier.
func isSafeRegExp(pattern string) bool {
	if len(utf16.Encode([]rune(pattern))) > 2048 {
		return false
	}
	return !nestedQuantifier().MatchString(pattern)
}

// CompileJSRegexp compiles a JavaScript regular expression (as gemini-cli's
// policies write them, no flags) into an RE2 one. What RE2 expresses is
// translated (\uXXXX, \0, \cX, identity escapes, JavaScript's \s and ".",
// [^] and []); lookarounds and backreferences are refused with
// ErrUnsupportedRegex; a pattern JavaScript itself rejects is an error.
func CompileJSRegexp(pattern string) (*regexp.Regexp, error) {
	src, err := translateJSRegexp(pattern)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, jsRegexpError(pattern, err)
	}
	return re, nil
}

// checkJSRegexp is CompileJSRegexp without the compilation: it returns the
// RE2 source of pattern, or the error CompileJSRegexp would return
// (regexp.Compile fails only where syntax.Parse does).
func checkJSRegexp(pattern string) (string, error) {
	src, err := translateJSRegexp(pattern)
	if err != nil {
		return "", err
	}
	if _, err := syntax.Parse(src, syntax.Perl); err != nil {
		return "", jsRegexpError(pattern, err)
	}
	return src, nil
}

// jsRegexpError words an RE2 syntax error as JavaScript's RegExp does.
func jsRegexpError(pattern string, err error) error {
	var se *syntax.Error
	msg := err.Error()
	if errors.As(err, &se) {
		switch se.Code {
		case syntax.ErrMissingParen:
			msg = "Unterminated group"
		case syntax.ErrUnexpectedParen:
			msg = "Unmatched ')'"
		case syntax.ErrMissingRepeatArgument:
			msg = "Nothing to repeat"
		case syntax.ErrMissingBracket:
			msg = "Unterminated character class"
		case syntax.ErrTrailingBackslash:
			msg = `\ at end of pattern`
		case syntax.ErrInvalidCharRange:
			msg = "Range out of order in character class"
		case syntax.ErrInvalidRepeatSize:
			msg = "numbers out of order in {} quantifier (or above RE2's limit of 1000)"
		case syntax.ErrInvalidRepeatOp:
			msg = "Nothing to repeat"
		}
	}
	return fmt.Errorf("Invalid regular expression: /%s/: %s", pattern, msg)
}

func unsupported(pattern, what string) error {
	return fmt.Errorf("%w: /%s/: %s (RE2 has no %s)", ErrUnsupportedRegex, pattern, what, what)
}

func translateJSRegexp(p string) (string, error) {
	var b strings.Builder
	b.Grow(len(p) + 16)
	inClass := false
	classStart := false // just after "[" or "[^"
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\\' {
			if i+1 >= len(p) {
				return "", fmt.Errorf("Invalid regular expression: /%s/: \\ at end of pattern", p)
			}
			i++
			e := p[i]
			classStart = false
			switch {
			case e >= '1' && e <= '9':
				if inClass {
					// Legacy octal escape in a class.
					j := i
					for j < len(p) && j < i+3 && p[j] >= '0' && p[j] <= '7' {
						j++
					}
					if j == i {
						b.WriteByte(e)
						continue
					}
					var v int
					for _, d := range p[i:j] {
						v = v*8 + int(d-'0')
					}
					fmt.Fprintf(&b, `\x{%x}`, v)
					i = j - 1
					continue
				}
				return "", unsupported(p, "backreferences")
			case e == '0':
				b.WriteString(`\x00`)
			case e == 'k':
				if strings.Contains(p, "(?<") {
					return "", unsupported(p, "backreferences")
				}
				b.WriteByte('k')
			case e == 'u':
				if i+4 < len(p) && isHex(p[i+1:i+5]) {
					b.WriteString(`\x{` + p[i+1:i+5] + `}`)
					i += 4
				} else {
					b.WriteByte('u')
				}
			case e == 'x':
				if i+2 < len(p) && isHex(p[i+1:i+3]) {
					b.WriteString(`\x` + p[i+1:i+3])
					i += 2
				} else {
					b.WriteByte('x')
				}
			case e == 'c':
				if i+1 < len(p) && isASCIILetter(p[i+1]) {
					fmt.Fprintf(&b, `\x{%x}`, p[i+1]%32)
					i++
				} else {
					b.WriteString(`\\c`)
				}
			case e == 's':
				if inClass {
					b.WriteString(jsSpace)
				} else {
					b.WriteString("[" + jsSpace + "]")
				}
			case e == 'S':
				if inClass {
					b.WriteString(jsNonSpace)
				} else {
					b.WriteString("[^" + jsSpace + "]")
				}
			case e == 'b' && inClass:
				b.WriteString(`\x08`)
			case strings.IndexByte("dDwWbBfnrtv", e) >= 0:
				b.WriteByte('\\')
				b.WriteByte(e)
			case isASCIILetter(e) || e == '_':
				b.WriteByte(e) // identity escape
			case e < 0x80:
				b.WriteByte('\\')
				b.WriteByte(e)
			default:
				b.WriteByte(e) // first byte of a multibyte rune; the rest copies as is
			}
			continue
		}
		if inClass {
			if c == ']' && !classStart {
				inClass = false
			}
			if c == '[' {
				b.WriteString(`\[`)
				classStart = false
				continue
			}
			classStart = false
			b.WriteByte(c)
			continue
		}
		switch c {
		case '[':
			switch {
			case strings.HasPrefix(p[i:], "[^]"):
				b.WriteString(`[\x00-\x{10FFFF}]`)
				i += 2
			case strings.HasPrefix(p[i:], "[]"):
				b.WriteString(`[^\x00-\x{10FFFF}]`)
				i++
			default:
				inClass = true
				classStart = true
				b.WriteByte('[')
				if i+1 < len(p) && p[i+1] == '^' {
					b.WriteByte('^')
					i++
				}
			}
		case '.':
			b.WriteString(`[^\n\r\x{2028}\x{2029}]`)
		case '(':
			if strings.HasPrefix(p[i:], "(?") {
				rest := p[i+2:]
				switch {
				case strings.HasPrefix(rest, ":"):
					b.WriteString("(?:")
					i += 2
				case strings.HasPrefix(rest, "="), strings.HasPrefix(rest, "!"),
					strings.HasPrefix(rest, "<="), strings.HasPrefix(rest, "<!"):
					return "", unsupported(p, "lookarounds")
				case strings.HasPrefix(rest, "<"):
					b.WriteString("(?P<")
					i += 2
				default:
					return "", fmt.Errorf("Invalid regular expression: /%s/: Invalid group", p)
				}
				continue
			}
			b.WriteByte('(')
		case '{':
			// JavaScript (without the u flag) reads "{" literally unless it
			// starts a well-formed quantifier.
			if j := quantifierEnd(p, i); j > 0 {
				b.WriteString(p[i:j])
				i = j - 1
			} else {
				b.WriteString(`\{`)
			}
		case '}':
			b.WriteString(`\}`)
		case ']':
			b.WriteString(`\]`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// quantifierEnd returns the index after a {n}, {n,} or {n,m} at i, or -1.
func quantifierEnd(p string, i int) int {
	j := i + 1
	d := j
	for j < len(p) && p[j] >= '0' && p[j] <= '9' {
		j++
	}
	if j == d {
		return -1
	}
	if j < len(p) && p[j] == ',' {
		j++
		for j < len(p) && p[j] >= '0' && p[j] <= '9' {
			j++
		}
	}
	if j < len(p) && p[j] == '}' {
		return j + 1
	}
	return -1
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
