package complete

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/agentry-dev/agentry/atpath"
	"github.com/agentry-dev/agentry/tools"
)

var testCommands = []Command{
	{Name: "help", Description: "For help"},
	{Name: "memory", Description: "Manage memory", SubCommands: []Command{
		{Name: "show"}, {Name: "reload"}, {Name: "list"}, {Name: "inbox"},
	}},
	{Name: "quit", AltNames: []string{"exit"}},
	{Name: "chat", SubCommands: []Command{{Name: "list"}, {Name: "save", Args: true}}},
	{Name: "model", Args: true},
	{Name: "debug-secret", Hidden: true},
	{Name: "usage-report"},
	{Name: "stats", AltNames: []string{"usage"}},
	{Name: "chatter"},
}

func values(s []Suggestion) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = x.Value
	}
	return out
}

func labels(s []Suggestion) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = x.Label
	}
	return out
}

func TestCommands(t *testing.T) {
	for _, tc := range []struct {
		input string
		want  []string
	}{
		{"/mem", []string{"/memory "}},
		{"/MeM", []string{"/memory "}},
		{"/memory s", []string{"/memory show"}},
		{"/memory ", []string{"/memory show", "/memory reload", "/memory list", "/memory inbox"}},
		{"/memory  l", []string{"/memory list"}},
		{"/q", []string{"/quit"}},
		{"/exi", []string{"/quit"}},
		{"/chat sa", []string{"/chat save "}},
		{"/exit", []string{"/quit"}},
		// An exact name, then an exact other name, then prefixes, in order.
		{"/chat", []string{"/chat ", "/chatter"}},
		{"/usage", []string{"/stats", "/usage-report"}},
		{"/h", []string{"/help"}},
		{"/", []string{"/help", "/memory ", "/quit", "/chat ", "/model ", "/usage-report", "/stats", "/chatter"}},
		{"/model gem", nil}, // arguments are the command's
		{"/memory show x", nil},
		{"/nope x", nil},
		{"/debug", nil},
		{"//comment", nil},
		{"/* code */", nil},
		{"hello /mem", nil},
		{"", nil},
	} {
		if got := values(Commands(testCommands, tc.input)); !slices.Equal(got, tc.want) {
			t.Errorf("Commands(%q) = %q, want %q", tc.input, got, tc.want)
		}
	}
	got := Commands(testCommands, "/he")
	if len(got) != 1 || got[0].Label != "help" || got[0].Description != "For help" {
		t.Errorf("suggestion %+v", got)
	}
}

// workspace builds:
//
//	.git/  .gitignore (build/, *.log)  .geminiignore (secret.txt)
//	README.md  app.log  secret.txt  build/out.bin  fifo-main (FIFO)
//	src/{main.go, math.go, Makefile, .hidden.go, mapper/}
//	my docs/read me.md   "weird (1),x.txt"   dot.   deep/a/b/c/main.txt
//	node_modules/main.js  inlink -> src  escape -> (outside)/main.go
func workspace(t *testing.T) (*tools.Workspace, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(".gitignore", "build/\n*.log\n")
	write(".geminiignore", "secret.txt\n")
	for _, f := range []string{"README.md", "app.log", "secret.txt", "build/out.bin", "src/main.go", "src/math.go", "src/Makefile",
		"src/.hidden.go", "src/mapper/x.go", "my docs/read me.md", "weird (1),x.txt", "dot.", "deep/a/b/c/main.txt", "node_modules/main.js"} {
		write(f, "content of "+f)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo-main"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "main.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "main.go"), filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "escapedir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("src", filepath.Join(root, "inlink")); err != nil {
		t.Fatal(err)
	}
	ws, err := tools.NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	return ws, root
}

func TestPaths(t *testing.T) {
	ws, root := workspace(t)
	for _, tc := range []struct {
		partial string
		want    []string
	}{
		{"src/ma", []string{"src/mapper/", "src/main.go", "src/Makefile", "src/math.go"}},
		{"src/MA", []string{"src/mapper/", "src/main.go", "src/Makefile", "src/math.go"}},
		{"src/.", []string{"src/.hidden.go"}},
		{"src/", []string{"src/mapper/", "src/main.go", "src/Makefile", "src/math.go"}},
		{"", []string{"deep/", "inlink/", "my docs/", "node_modules/", "src/", "dot.", "README.md", "weird (1),x.txt"}},
		{".git", []string{".gitignore"}}, // .git itself is never suggested
		{".ge", []string{".geminiignore"}},
		// Recursive: every depth, breadth first, never into node_modules,
		// a symlinked directory, an ignored one, or outside.
		{"main", []string{"src/main.go", "deep/a/b/c/main.txt"}},
		{"read", []string{"README.md", "my docs/read me.md"}},
		{"my docs/", []string{"my docs/read me.md"}},
		{"inl", []string{"inlink/"}},
		{"inlink/mat", []string{"inlink/math.go"}},
		{"esc", nil},
		{"escapedir/", nil},
		{"build", nil},
		{"build/", nil},
		{"app", nil},
		{"secret", nil},
		{"fifo", nil},
		{"../", nil},
		{"src/../", nil},
		{"src/../../etc/pa", nil},
		{"nothing", nil},
		{root + "/src/mat", []string{root + "/src/math.go"}},
		{filepath.Dir(root) + "/", nil},
	} {
		got, err := Paths(t.Context(), ws, tc.partial, Options{})
		if err != nil {
			t.Fatalf("%q: %v", tc.partial, err)
		}
		if !slices.Equal(labels(got), tc.want) {
			t.Errorf("Paths(%q) = %q, want %q", tc.partial, labels(got), tc.want)
		}
	}
	got, _ := Paths(t.Context(), ws, "main", Options{NoRecursive: true})
	if len(got) != 0 {
		t.Errorf("without the recursive search: %q", labels(got))
	}
	got, _ = Paths(t.Context(), ws, "main", Options{MaxDepth: 2})
	if !slices.Equal(labels(got), []string{"src/main.go"}) {
		t.Errorf("MaxDepth 2: %q", labels(got))
	}
	got, _ = Paths(t.Context(), ws, "src/", Options{MaxResults: 2})
	if !slices.Equal(labels(got), []string{"src/mapper/", "src/main.go"}) {
		t.Errorf("MaxResults 2: %q", labels(got))
	}
}

// TestExtraRoots: paths in other workspace roots are absolute.
func TestExtraRoots(t *testing.T) {
	_, root := workspace(t)
	extra, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(extra, "main.rs"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := tools.NewWorkspace(root, extra)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := Paths(t.Context(), ws, "main.", Options{})
	if want := []string{extra + "/main.rs", "src/main.go", "deep/a/b/c/main.txt"}; !slices.Equal(labels(got), want) {
		t.Errorf("recursive: %q, want %q", labels(got), want)
	}
	got, _ = Paths(t.Context(), ws, "", Options{})
	if !slices.Contains(labels(got), extra+"/main.rs") || !slices.Contains(labels(got), "src/") {
		t.Errorf("listing: %q", labels(got))
	}
}

// TestSuggestionsParse: every value reads back, through atpath's parser,
// as the file it names.
func TestSuggestionsParse(t *testing.T) {
	ws, _ := workspace(t)
	for _, partial := range []string{"my docs/read", "weird", "dot"} {
		got, err := Paths(t.Context(), ws, partial, Options{})
		if err != nil || len(got) != 1 {
			t.Fatalf("%q: %q, %v", partial, labels(got), err)
		}
		input := "summarise @" + Escape(partial)
		tok, ok := AtToken(input, len(input))
		if !ok || tok.Path != partial {
			t.Fatalf("%q: token %+v", input, tok)
		}
		prompt, _ := tok.Replace(input, got[0])
		prompt += "please."
		res, err := atpath.Expand(t.Context(), ws, prompt)
		if err != nil {
			t.Fatalf("%q: %v", prompt, err)
		}
		want := "\nContent from @" + got[0].Label + ":\n"
		if !slices.Contains(res.Parts, want) || !slices.Contains(res.Parts, "content of "+got[0].Label) {
			t.Errorf("%q expanded to %q, want a part %q", prompt, res.Parts, want)
		}
	}
}

// TestHugeDirectory: a directory larger than the bound is read only up to
// it, and the recursive search stops at it too.
func TestHugeDirectory(t *testing.T) {
	root := t.TempDir()
	for i := range 1000 {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%04d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 50 {
		if err := os.MkdirAll(filepath.Join(root, fmt.Sprintf("d%02d", i), "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := tools.NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{MaxEntries: 500, MaxResults: 10000}.withDefaults()
	for _, partial := range []string{"", "f", "zzz"} {
		s := &search{ctx: t.Context(), ws: ws, opts: opts, ignorers: map[string]*tools.Ignorer{}}
		if err := s.run(partial); err != nil {
			t.Fatal(err)
		}
		if s.read != 500 {
			t.Errorf("%q: read %d entries, want the bound, 500", partial, s.read)
		}
	}
	got, err := Paths(t.Context(), ws, "f", Options{MaxEntries: 500})
	if err != nil || len(got) != DefaultMaxResults {
		t.Errorf("%d suggestions, %v", len(got), err)
	}
	// The suggestions are sorted whatever order the directory gave.
	if !slices.IsSortedFunc(got, func(a, b Suggestion) int { return compareFound(found{a.Label, 0}, found{b.Label, 0}) }) {
		t.Error("unsorted")
	}
	ctx, cancel := context.WithCancelCause(t.Context())
	stop := errors.New("typed on")
	cancel(stop)
	if _, err := Paths(ctx, ws, "f", Options{}); !errors.Is(err, stop) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestAtToken(t *testing.T) {
	for _, tc := range []struct {
		input  string
		cursor int
		want   Token
		ok     bool
	}{
		{"look at @src/ma", 15, Token{9, 15, "src/ma"}, true},
		{"look at @src/main.go and", 12, Token{9, 20, "src/main.go"}, true},
		{"@my\\ do", 7, Token{1, 7, "my do"}, true},
		{`@"my"x`, 6, Token{1, 6, "myx"}, true},
		{"@", 1, Token{1, 1, ""}, true},
		{"@a b", 4, Token{}, false},
		{"no reference", 5, Token{}, false},
		{`mail\@host`, 10, Token{}, false},
		{`x \\@y`, 6, Token{5, 6, "y"}, true}, // an escaped backslash, then a real @
		{"@src", 99, Token{1, 4, "src"}, true},
	} {
		got, ok := AtToken(tc.input, tc.cursor)
		if got != tc.want || ok != tc.ok {
			t.Errorf("AtToken(%q, %d) = %+v, %v; want %+v, %v", tc.input, tc.cursor, got, ok, tc.want, tc.ok)
		}
	}
	tok, _ := AtToken("see @src/ma now", 11)
	if s, c := tok.Replace("see @src/ma now", Suggestion{Value: "src/main.go"}); s != "see @src/main.go now" || c != 16 {
		t.Errorf("Replace before a space: %q, %d", s, c)
	}
	tok, _ = AtToken("see @sr", 7)
	if s, c := tok.Replace("see @sr", Suggestion{Value: "src/"}); s != "see @src/" || c != 9 {
		t.Errorf("Replace with a directory: %q, %d", s, c)
	}
	if s, c := tok.Replace("see @sr", Suggestion{Value: "src.go"}); s != "see @src.go " || c != 12 {
		t.Errorf("Replace with a file: %q, %d", s, c)
	}
}

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"src/main.go":      "src/main.go",
		"my docs/a b.md":   `my\ docs/a\ b.md`,
		"weird (1),x.txt":  `weird\ \(1\)\,x.txt`,
		"dot.":             `dot\.`,
		`back\slash`:       `back\\slash`,
		"q\"uote's$`#&!~;": `q\"uote\'s\$\` + "`" + `\#\&\!\~\;`,
		"dir.d/":           "dir.d/",
		"a\tb":             "a\\\tb",
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
		if got := unescape(Escape(in)); got != in {
			t.Errorf("unescape(Escape(%q)) = %q", in, got)
		}
	}
}
