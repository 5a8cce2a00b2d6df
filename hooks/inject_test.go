package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileDirNames are project directory names that must stay data: shell
// syntax, quotes and spaces.
func hostileDirNames() []string {
	return []string{
		"$(touch pwned)",
		"`touch pwned`",
		"with space",
		"it's",
		`a"; touch pwned; "b`,
		"${IFS}$(touch${IFS}pwned)",
	}
}

// TestProjectDirIsNeverShellCode runs hooks in project directories whose
// names are shell syntax: the value reaches the hook through the
// environment, so nothing in the name runs, and every way gemini-cli's
// documentation and users write the reference still finds the directory.
func TestProjectDirIsNeverShellCode(t *testing.T) {
	for _, name := range hostileDirNames() {
		t.Run(name, func(t *testing.T) {
			base := t.TempDir()
			project := filepath.Join(base, name)
			if err := os.Mkdir(project, 0o755); err != nil {
				t.Fatal(err)
			}
			script := filepath.Join(project, "x.sh")
			if err := os.WriteFile(script, []byte("echo ran >> \"$1\"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			ran := filepath.Join(base, "ran")
			cmd := func(n, c string) Command {
				return Command{Type: CommandType, Name: n, Command: c, Env: map[string]string{"RAN": ran}}
			}
			hooks := []Command{
				cmd("echo", `echo "$GEMINI_PROJECT_DIR" > out`),
				cmd("claude", `echo "$CLAUDE_PROJECT_DIR|$AGENTRY_PROJECT_DIR|$GEMINI_CWD" > out2`),
				cmd("quoted", `sh "$GEMINI_PROJECT_DIR/x.sh" "$RAN"`),
				cmd("unquoted", `sh $GEMINI_PROJECT_DIR/x.sh "$RAN"`),
				cmd("braces", `sh ${GEMINI_PROJECT_DIR}/x.sh "$RAN"`),
				cmd("quoted-braces", `sh "${GEMINI_PROJECT_DIR}/x.sh" "$RAN"`),
				cmd("single-quoted-text", `echo '$GEMINI_PROJECT_DIR' > out3`),
			}
			f := &fixture{t: t, dir: project}
			res := run(t, f.runner(Settings{Hooks: map[Event][]Definition{BeforeTool: {{Hooks: hooks, Sequential: true}}}}), BeforeTool, "x", nil)
			noFailures(t, res)

			filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.Name() == "pwned" {
					t.Errorf("the directory name ran as a command: %s exists", p)
				}
				return nil
			})
			if got := f.read("out"); got != project {
				t.Errorf("out = %q, want the literal path %q", got, project)
			}
			if got, want := f.read("out2"), project+"|"+project+"|"+project; got != want {
				t.Errorf("out2 = %q, want %q", got, want)
			}
			if got := f.read("out3"); got != "$GEMINI_PROJECT_DIR" {
				t.Errorf("single-quoted reference = %q, want it left as text", got)
			}
			b, err := os.ReadFile(ran)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(string(b), "ran"); got != 4 {
				t.Errorf("the script ran %d times, want 4 (quoted, unquoted, braces, quoted braces)", got)
			}
		})
	}
}

func TestQuoteReferences(t *testing.T) {
	names := []string{"GEMINI_PROJECT_DIR", "GEMINI_CWD"}
	for in, want := range map[string]string{
		`$GEMINI_PROJECT_DIR/x.sh`:                        `"$GEMINI_PROJECT_DIR"/x.sh`,
		`${GEMINI_PROJECT_DIR}/x.sh $GEMINI_CWD`:          `"${GEMINI_PROJECT_DIR}"/x.sh "$GEMINI_CWD"`,
		`"$GEMINI_PROJECT_DIR/x.sh"`:                      `"$GEMINI_PROJECT_DIR/x.sh"`,
		`echo '$GEMINI_CWD' \$GEMINI_CWD`:                 `echo '$GEMINI_CWD' \$GEMINI_CWD`,
		`cd $GEMINI_CWDX $HOME $1 $ end`:                  `cd $GEMINI_CWDX $HOME $1 $ end`,
		`X=$GEMINI_CWD; echo "a $GEMINI_CWD" $GEMINI_CWD`: `X="$GEMINI_CWD"; echo "a $GEMINI_CWD" "$GEMINI_CWD"`,
		// Past a construct it does not follow, the rest is left as it is.
		`$GEMINI_CWD $(ls $GEMINI_CWD) $GEMINI_CWD`: `"$GEMINI_CWD" $(ls $GEMINI_CWD) $GEMINI_CWD`,
		"$GEMINI_CWD `ls $GEMINI_CWD`":              "\"$GEMINI_CWD\" `ls $GEMINI_CWD`",
		`${GEMINI_CWD:-"$HOME"} $GEMINI_CWD`:        `${GEMINI_CWD:-"$HOME"} $GEMINI_CWD`,
		"cat <<EOF\n$GEMINI_CWD\nEOF":               "cat <<EOF\n$GEMINI_CWD\nEOF",
		`echo 'unterminated $GEMINI_CWD`:            `echo 'unterminated $GEMINI_CWD`,
	} {
		if got := quoteReferences(in, names); got != want {
			t.Errorf("quoteReferences(%q) = %q, want %q", in, got, want)
		}
	}
}
