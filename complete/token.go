package complete

import "strings"

// Token is the @path reference being typed: the text after an "@".
type Token struct {
	// Start and End are the byte offsets of the text after the "@" in
	// the input, End excluded.
	Start, End int
	// Path is that text unescaped, as the @path parser reads it (package
	// atpath): backslash escapes resolved, double quotes removed.
	Path string
}

// AtToken finds the @path reference the cursor (a byte offset in input)
// is in, as gemini-cli's input box finds it: back from the cursor to an
// "@" with no unescaped space between, forward to the next unescaped
// space. An escaped "@" ("\@") starts no reference.
func AtToken(input string, cursor int) (Token, bool) {
	cursor = max(0, min(cursor, len(input)))
	for i := cursor - 1; i >= 0; i-- {
		switch input[i] {
		case ' ', '\t', '\n', '\r':
			if !escaped(input, i) {
				return Token{}, false
			}
		case '@':
			if escaped(input, i) {
				continue
			}
			end := len(input)
			for j := cursor; j < len(input); j++ {
				if c := input[j]; (c == ' ' || c == '\t' || c == '\n' || c == '\r') && !escaped(input, j) {
					end = j
					break
				}
			}
			return Token{Start: i + 1, End: end, Path: unescape(input[i+1 : end])}, true
		}
	}
	return Token{}, false
}

// escaped reports whether input[i] follows an odd number of backslashes.
func escaped(input string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && input[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// unescape resolves backslash escapes and drops double quotes, as
// atpath's parser does.
func unescape(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '\\' && i+1 < len(p):
			i++
			b.WriteByte(p[i])
		case p[i] == '"':
		default:
			b.WriteByte(p[i])
		}
	}
	return b.String()
}

// Replace puts s in place of t in input and returns the new input and the
// cursor after the completion. As in gemini-cli, a space follows a
// completed file unless one is there already; a directory is left open
// for more.
func (t Token) Replace(input string, s Suggestion) (string, int) {
	v := s.Value
	if !strings.HasSuffix(v, "/") && (t.End >= len(input) || input[t.End] != ' ') {
		v += " "
	}
	return input[:t.Start] + v + input[t.End:], t.Start + len(v)
}

// Escape writes path so that the @path parser reads it back whole: a
// backslash before each character gemini-cli escapes (escapePath:
// white space, ()[]{};|*?$`'"#&<>!~ and the backslash), before a comma,
// which ends a reference for the parser, and before a final ".", which
// the parser would leave out of a reference followed by a space.
func Escape(path string) string {
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		c := path[i]
		if strings.IndexByte(" \t()[]{};|*?$`'\"#&<>!~\\,", c) >= 0 || c == '.' && i == len(path)-1 {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}
