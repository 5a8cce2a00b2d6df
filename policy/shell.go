package policy

import (
	"regexp"
	"sort"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// The names gemini-cli gives to parse nodes that are not commands
// (REDIRECTION_NAMES): they are skipped when sub-commands are checked.
const (
	nameRedirIn    = "redirection (<)"
	nameRedirOut   = "redirection (>)"
	nameHeredoc    = "heredoc (<<)"
	nameHerestring = "herestring (<<<)"
	nameCmdSubst   = "command substitution"
	nameBacktick   = "backtick substitution"
	nameProcSubst  = "process substitution"
	nameSubshell   = "subshell"
)

func isRedirectionName(n string) bool {
	switch n {
	case nameRedirIn, nameRedirOut, nameHeredoc, nameHerestring, nameCmdSubst, nameBacktick, nameProcSubst, nameSubshell:
		return true
	}
	return false
}

// cmdDetail is one command found in a shell command line (gemini-cli's
// ParsedCommandDetail).
type cmdDetail struct {
	name  string
	text  string
	start int
}

// parsedCommand is gemini-cli's CommandParseResult.
type parsedCommand struct {
	details  []cmdDetail
	hasError bool
}

// parseCommandDetails parses a command line as bash and lists every command
// in it, nested ones included, in source order (gemini-cli's
// parseBashCommandDetails over tree-sitter-bash, here over mvdan.cc/sh).
// A syntax error, no command at all, or a ${x@P} prompt expansion make
// hasError true.
func parseCommandDetails(command string, pool *sync.Pool) parsedCommand {
	if strings.TrimSpace(command) == "" {
		return parsedCommand{hasError: true}
	}
	if d, ok := simpleCommand(command); ok {
		return parsedCommand{details: []cmdDetail{d}}
	}
	f, err := parseBash(command, pool)
	if err != nil {
		return parsedCommand{hasError: true}
	}
	var out parsedCommand
	add := func(name string, start, end int) {
		out.details = append(out.details, cmdDetail{name: name, text: strings.TrimSpace(command[start:end]), start: start})
	}
	// tree-sitter-bash puts a herestring after the arguments inside the
	// command: its text runs to the herestring's end.
	ends := map[*syntax.CallExpr]int{}
	skip := map[*syntax.CallExpr]bool{}
	skipCallOf := func(st *syntax.Stmt) {
		if st == nil {
			return
		}
		if call, ok := st.Cmd.(*syntax.CallExpr); ok {
			skip[call] = true
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Stmt:
			if call, ok := x.Cmd.(*syntax.CallExpr); ok && len(call.Args) > 0 {
				for _, r := range x.Redirs {
					if r.Op == syntax.WordHdoc && r.Pos().Offset() > call.Pos().Offset() && int(r.End().Offset()) > ends[call] {
						ends[call] = int(r.End().Offset())
					}
				}
			}
		case *syntax.CallExpr:
			if len(x.Args) > 0 && !skip[x] {
				w := x.Args[0]
				end := max(int(x.End().Offset()), ends[x])
				add(normalizeCommandName(command[w.Pos().Offset():w.End().Offset()]), int(x.Pos().Offset()), end)
			}
		case *syntax.DeclClause:
			add(x.Variant.Value, int(x.Pos().Offset()), int(x.End().Offset()))
		case *syntax.TestClause:
			add("[[", int(x.Pos().Offset()), int(x.End().Offset()))
		case *syntax.Redirect:
			name := nameRedirOut
			switch x.Op {
			case syntax.Hdoc, syntax.DashHdoc:
				name = nameHeredoc
			case syntax.WordHdoc:
				name = nameHerestring
			case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn:
				name = nameRedirIn
			}
			add(name, int(x.Pos().Offset()), int(x.End().Offset()))
		case *syntax.CmdSubst:
			// tree-sitter-bash parses `…` as a command substitution too.
			add(nameCmdSubst, int(x.Pos().Offset()), int(x.End().Offset()))
		case *syntax.TimeClause:
			// tree-sitter-bash reads "time cmd args" as the command time.
			add("time", int(x.Pos().Offset()), int(x.End().Offset()))
			skipCallOf(x.Stmt)
		case *syntax.CoprocClause:
			add("coproc", int(x.Pos().Offset()), int(x.End().Offset()))
			skipCallOf(x.Stmt)
		case *syntax.LetClause:
			add("let", int(x.Pos().Offset()), int(x.End().Offset()))
		case *syntax.ArithmCmd:
			add("((", int(x.Pos().Offset()), int(x.End().Offset()))
		case *syntax.ProcSubst:
			add(nameProcSubst, int(x.Pos().Offset()), int(x.End().Offset()))
		case *syntax.Subshell:
			add(nameSubshell, int(x.Pos().Offset()), int(x.End().Offset()))
		case *syntax.ParamExp:
			if x.Exp != nil && x.Exp.Op == syntax.OtherParamOps && x.Exp.Word != nil && strings.EqualFold(x.Exp.Word.Lit(), "p") {
				out.hasError = true
			}
		}
		return true
	})
	sort.SliceStable(out.details, func(i, j int) bool { return out.details[i].start < out.details[j].start })
	if len(out.details) == 0 {
		out.hasError = true
	}
	return out
}

// parseBash parses a line as bash, with a parser from pool (an Engine's)
// when there is one.
func parseBash(command string, pool *sync.Pool) (*syntax.File, error) {
	if pool == nil {
		return newBashParser().Parse(strings.NewReader(command), "")
	}
	p := pool.Get().(*syntax.Parser)
	defer pool.Put(p)
	return p.Parse(strings.NewReader(command), "")
}

func newBashParser() *syntax.Parser { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }

// bashReserved are the words that start something other than a simple
// command in bash.
var bashReserved = map[string]bool{"if": true, "then": true, "else": true, "elif": true, "fi": true, "for": true,
	"in": true, "do": true, "done": true, "while": true, "until": true, "case": true, "esac": true, "select": true,
	"function": true, "time": true, "coproc": true, "{": true, "}": true, "!": true}

// simpleCommand is the parse of a line that is one simple command of plain
// words (letters, digits and -_./,:@%+, no assignment, no reserved word):
// what the full parse would find, without it.
func simpleCommand(command string) (cmdDetail, bool) {
	for i := 0; i < len(command); i++ {
		c := command[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ' ' || c == '\t' ||
			c == '-' || c == '_' || c == '.' || c == '/' || c == ',' || c == ':' || c == '@' || c == '%' || c == '+') {
			return cmdDetail{}, false
		}
	}
	text := strings.Trim(command, " \t")
	end := strings.IndexAny(text, " \t")
	if end < 0 {
		end = len(text)
	}
	name := text[:end]
	if bashReserved[name] {
		return cmdDetail{}, false
	}
	return cmdDetail{name: name, text: text, start: len(command) - len(strings.TrimLeft(command, " \t"))}, true
}

// normalizeCommandName strips the quotes around a command name.
func normalizeCommandName(raw string) string {
	if len(raw) >= 2 {
		f, l := raw[0], raw[len(raw)-1]
		if (f == '"' && l == '"') || (f == '\'' && l == '\'') {
			return raw[1 : len(raw)-1]
		}
	}
	return strings.TrimSpace(raw)
}

// hasRedirection reports whether a command line redirects to or from a file
// (a file redirect, a heredoc or a herestring anywhere in it). A line that
// does not parse counts when it holds "<" or ">".
func hasRedirection(command string, pool *sync.Pool) bool {
	if !strings.ContainsAny(command, "<>") {
		return false
	}
	f, err := parseBash(command, pool)
	if err != nil {
		return true
	}
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if s, ok := n.(*syntax.Stmt); ok && len(s.Redirs) > 0 {
			found = true
		}
		return !found
	})
	return found
}

// splitCommands is gemini-cli's splitCommands: the texts of the commands of
// a line, none when it does not parse.
func splitCommands(command string, pool *sync.Pool) []string {
	p := parseCommandDetails(command, pool)
	if p.hasError {
		return nil
	}
	var out []string
	for _, d := range p.details {
		if !isRedirectionName(d.name) && d.text != "" {
			out = append(out, d.text)
		}
	}
	return out
}

// commandRoots is gemini-cli's getCommandRoots: the names of the commands
// of a line, in order, none when it does not parse.
func commandRoots(command string, pool *sync.Pool) []string {
	if command == "" {
		return nil
	}
	p := parseCommandDetails(command, pool)
	if p.hasError {
		return nil
	}
	var out []string
	for _, d := range p.details {
		if !isRedirectionName(d.name) && d.name != "" {
			out = append(out, d.name)
		}
	}
	return out
}

var shellWrapperRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^\s*(?:(?:(?:\S+/)?(?:sh|bash|zsh))\s+-c|cmd\.exe\s+/c|powershell(?:\.exe)?\s+(?:-NoProfile\s+)?-Command|pwsh(?:\.exe)?\s+(?:-NoProfile\s+)?-Command)\s+`)
})

// stripShellWrapper is gemini-cli's stripShellWrapper: `bash -c "…"` (sh,
// zsh, cmd.exe /c, powershell/pwsh -Command) becomes the inner command.
func stripShellWrapper(command string) string {
	if !containsFoldASCII(command, "-c") && !containsFoldASCII(command, "/c") {
		return strings.TrimSpace(command) // the wrapper pattern needs one of them
	}
	m := shellWrapperRE().FindStringIndex(command)
	if m == nil {
		return strings.TrimSpace(command)
	}
	inner := strings.TrimSpace(command[m[1]:])
	if len(inner) >= 2 && ((inner[0] == '"' && inner[len(inner)-1] == '"') || (inner[0] == '\'' && inner[len(inner)-1] == '\'')) {
		posix := strings.HasSuffix(strings.TrimSpace(command[:m[1]]), "-c")
		if posix && inner[0] == '"' {
			toks, err := shellQuote(inner, true)
			if err == nil && len(toks) == 1 && toks[0].kind == tokWord {
				return toks[0].s
			}
		}
		return inner[1 : len(inner)-1]
	}
	return inner
}

func containsFoldASCII(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// The chunker of shell-quote's parse (as gemini-cli 0.61.0 bundles it).
const sqControl = `(?:\|\||&&|;;|\|&|<\(|<<<|>>|>&|<&|[&;()|<>])`

var (
	sqChunker = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(` + sqControl + `)|((?:\\['"|&;()<> \t]|[^\s'"|&;()<> \t])+|"(?:\\"|[^"])*?"|'(?:\\'|[^'])*?')+`)
	})
	sqControlRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^` + sqControl + `$`) })
)

type tokKind uint8

const (
	tokWord tokKind = iota
	tokOp
	tokGlob
	tokComment
)

type sqToken struct {
	kind tokKind
	s    string
}

type badSubstitution struct{ s string }

func (e badSubstitution) Error() string { return "Bad substitution: " + e.s }

// shellQuote is shell-quote's parse: words, operators, globs and comments.
// Variables expand to "" (keepVars: to "$name", as stripShellWrapper asks).
func shellQuote(s string, keepVars bool) ([]sqToken, error) {
	matches := sqChunker().FindAllStringIndex(s, -1)
	var out []sqToken
	commented := false
	for _, m := range matches {
		chunk := s[m[0]:m[1]]
		if chunk == "" || commented {
			continue
		}
		if sqControlRE().MatchString(chunk) {
			out = append(out, sqToken{tokOp, chunk})
			continue
		}
		var quote byte
		esc, glob := false, false
		var b strings.Builder
		var opChunk, done bool
		for i := 0; i < len(chunk) && !done; i++ {
			c := chunk[i]
			glob = glob || (quote == 0 && (c == '*' || c == '?'))
			switch {
			case esc:
				b.WriteByte(c)
				esc = false
			case quote != 0:
				switch {
				case c == quote:
					quote = 0
				case quote == '\'':
					b.WriteByte(c)
				case c == '\\':
					i++
					var n byte
					if i < len(chunk) {
						n = chunk[i]
					}
					if n == '"' || n == '\\' || n == '$' {
						b.WriteByte(n)
					} else {
						b.WriteByte('\\')
						if i < len(chunk) {
							b.WriteByte(n)
						}
					}
				case c == '$':
					v, ni, err := sqEnvVar(chunk, i, keepVars)
					if err != nil {
						return nil, err
					}
					b.WriteString(v)
					i = ni
				default:
					b.WriteByte(c)
				}
			case c == '"' || c == '\'':
				quote = c
			case sqControlRE().MatchString(string(c)):
				opChunk = true
				done = true
			case c == '#':
				commented = true
				if b.Len() > 0 {
					out = append(out, sqToken{tokWord, b.String()})
				}
				out = append(out, sqToken{tokComment, s[m[0]+i+1:]})
				done = true
			case c == '\\':
				esc = true
			case c == '$':
				v, ni, err := sqEnvVar(chunk, i, keepVars)
				if err != nil {
					return nil, err
				}
				b.WriteString(v)
				i = ni
			default:
				b.WriteByte(c)
			}
		}
		switch {
		case opChunk:
			out = append(out, sqToken{tokOp, chunk})
		case commented:
		case glob:
			out = append(out, sqToken{tokGlob, b.String()})
		default:
			out = append(out, sqToken{tokWord, b.String()})
		}
	}
	return out, nil
}

// sqEnvVar is shell-quote's parseEnvVar, i at the "$"; it returns the
// value and the index the caller's loop continues from (its i++ follows).
func sqEnvVar(s string, i int, keep bool) (string, int, error) {
	i++
	var name string
	var c byte
	if i < len(s) {
		c = s[i]
	}
	switch {
	case c == '{':
		i++
		if i < len(s) && s[i] == '}' {
			return "", 0, badSubstitution{s[i-2 : i+1]}
		}
		end := strings.IndexByte(s[min(i, len(s)):], '}')
		if end < 0 {
			return "", 0, badSubstitution{s[min(i, len(s)):]}
		}
		name = s[i : i+end]
		i += end
	case c != 0 && strings.IndexByte("*@#?$!_-", c) >= 0:
		name = string(c)
		i++
	default:
		rest := s[min(i, len(s)):]
		j := strings.IndexFunc(rest, func(r rune) bool {
			return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		})
		if j < 0 {
			name = rest
			i = len(s)
		} else {
			name = rest[:j]
			i += j - 1
		}
	}
	if keep {
		return "$" + name, i, nil
	}
	if name == "" {
		return "$", i, nil
	}
	return "", i, nil
}

// shellArgs is gemini-cli's shellParse(command).map(extractStringFromParseEntry).
func shellArgs(command string) ([]string, error) {
	toks, err := shellQuote(command, false)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(toks))
	for i, t := range toks {
		if t.kind != tokComment {
			out[i] = t.s
		}
	}
	return out, nil
}
