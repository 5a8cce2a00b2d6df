package policy

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// The shell heuristics of gemini-cli 0.61.0 (core/sandbox/utils/
// commandSafety.ts, POSIX variant): commands known to be dangerous, and
// commands known to be safe (read-only, inside the workspace).

var unsafeFindOptions = map[string]bool{"-exec": true, "-execdir": true, "-ok": true, "-okdir": true,
	"-delete": true, "-fls": true, "-fprint": true, "-fprint0": true, "-fprintf": true}

var safeCommands = map[string]bool{"__read": true, "__write": true, "cat": true, "cd": true, "cut": true,
	"echo": true, "expr": true, "false": true, "grep": true, "head": true, "id": true, "ls": true, "nl": true,
	"paste": true, "pwd": true, "rev": true, "seq": true, "stat": true, "tail": true, "tr": true, "true": true,
	"uname": true, "uniq": true, "wc": true, "which": true, "whoami": true, "numfmt": true, "tac": true}

var fileReadingCommands = map[string]bool{"cat": true, "head": true, "tail": true, "tac": true, "nl": true,
	"stat": true, "wc": true, "cut": true, "paste": true, "rev": true, "uniq": true, "numfmt": true, "ls": true,
	"__read": true}

var gitReadOnly = []string{"status", "log", "diff", "show", "branch"}

func isRipgrep(cmd string) bool {
	b := filepath.Base(cmd)
	return b == "rg" || b == "rg.exe"
}

// isDangerousCommand: rm -f/-rf/-fr, ln -s, sudo + dangerous, find with an
// executing or writing action, rg --pre/--hostname-bin/-z, git with a config
// override or a read-only subcommand given writing flags, base64 -o.
func isDangerousCommand(args []string) bool {
	if len(args) == 0 {
		return false
	}
	cmd := args[0]
	if cmd == "ln" {
		for _, a := range args {
			if a == "-s" || a == "--symbolic" || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "s")) {
				return true
			}
		}
	}
	switch {
	case cmd == "rm":
		return len(args) > 1 && (args[1] == "-f" || args[1] == "-rf" || args[1] == "-fr")
	case cmd == "sudo":
		return isDangerousCommand(args[1:])
	case cmd == "find":
		for _, a := range args {
			if unsafeFindOptions[a] {
				return true
			}
		}
		return false
	case isRipgrep(cmd):
		for _, a := range args {
			if rgUnsafe(a) {
				return true
			}
		}
		return false
	case cmd == "git":
		if gitConfigOverride(args) {
			return true
		}
		idx, sub := findGitSubcommand(args)
		switch sub {
		case "":
			return false
		case "branch":
			return !(gitArgsReadOnly(args[idx+1:]) && gitBranchReadOnly(args[idx+1:]))
		default:
			return !gitArgsReadOnly(args[idx+1:])
		}
	case cmd == "base64":
		return base64Unsafe(args)
	}
	return false
}

func rgUnsafe(a string) bool {
	if a == "--search-zip" || a == "-z" {
		return true
	}
	for _, opt := range []string{"--pre", "--hostname-bin"} {
		if a == opt || strings.HasPrefix(a, opt+"=") {
			return true
		}
	}
	return false
}

func base64Unsafe(args []string) bool {
	for _, a := range args[1:] {
		if a == "-o" || a == "--output" || strings.HasPrefix(a, "--output=") || (strings.HasPrefix(a, "-o") && a != "-o") {
			return true
		}
	}
	return false
}

func findGitSubcommand(args []string) (int, string) {
	skip := false
	for idx := 1; idx < len(args); idx++ {
		if skip {
			skip = false
			continue
		}
		a := args[idx]
		if strings.HasPrefix(a, "--config-env=") || strings.HasPrefix(a, "--exec-path=") || strings.HasPrefix(a, "--git-dir=") ||
			strings.HasPrefix(a, "--namespace=") || strings.HasPrefix(a, "--super-prefix=") || strings.HasPrefix(a, "--work-tree=") ||
			((strings.HasPrefix(a, "-C") || strings.HasPrefix(a, "-c")) && len(a) > 2) {
			continue
		}
		switch a {
		case "-C", "-c", "--config-env", "--exec-path", "--git-dir", "--namespace", "--super-prefix", "--work-tree":
			skip = true
			continue
		}
		if a == "--" || strings.HasPrefix(a, "-") {
			continue
		}
		for _, s := range gitReadOnly {
			if s == a {
				return idx, a
			}
		}
		return -1, ""
	}
	return -1, ""
}

func gitConfigOverride(args []string) bool {
	for _, a := range args {
		if a == "-c" || a == "--config-env" || (strings.HasPrefix(a, "-c") && len(a) > 2) || strings.HasPrefix(a, "--config-env=") {
			return true
		}
	}
	return false
}

func gitArgsReadOnly(args []string) bool {
	for _, a := range args {
		switch a {
		case "--output", "--ext-diff", "--textconv", "--exec", "--paginate":
			return false
		}
		if strings.HasPrefix(a, "--output=") || strings.HasPrefix(a, "--exec=") {
			return false
		}
	}
	return true
}

func gitBranchReadOnly(args []string) bool {
	if len(args) == 0 {
		return true
	}
	saw := false
	for _, a := range args {
		switch {
		case a == "--list" || a == "-l" || a == "--show-current" || a == "-a" || a == "--all" || a == "-r" ||
			a == "--remotes" || a == "-v" || a == "-vv" || a == "--verbose":
			saw = true
		case strings.HasPrefix(a, "--format="):
			saw = true
		default:
			return false
		}
	}
	return saw
}

var digitsRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d+$`) })

func validSedN(a string) bool {
	if !strings.HasSuffix(a, "p") {
		return false
	}
	parts := strings.Split(a[:len(a)-1], ",")
	switch len(parts) {
	case 1:
		return digitsRE().MatchString(parts[0])
	case 2:
		return digitsRE().MatchString(parts[0]) && digitsRE().MatchString(parts[1])
	}
	return false
}

// trustedBinDirs are gemini-cli's trusted system prefixes (isTrustedSystemPath).
var trustedBinDirs = []string{"/usr/bin", "/bin", "/usr/local/bin", "/opt/homebrew/bin", "/opt/homebrew/Cellar",
	"/usr/local/Cellar", "/usr/sbin", "/sbin"}

func isTrustedCommandPath(cmd string) bool {
	if !filepath.IsAbs(cmd) {
		return false
	}
	real, err := filepath.EvalSymlinks(cmd)
	if err != nil {
		return false
	}
	for _, p := range trustedBinDirs {
		if real == p || strings.HasPrefix(real, p+"/") {
			return true
		}
	}
	return false
}

// workspaceView is where a shell command runs: the workspace root and the
// directory (both real paths), or none known.
type workspaceView struct {
	root, cwd string
	known     bool
}

func newWorkspaceView(workspace, dirPath string) workspaceView {
	if workspace == "" {
		return workspaceView{}
	}
	root := realPath(filepath.Clean(workspace))
	cwd := root
	if dirPath != "" {
		if filepath.IsAbs(dirPath) {
			cwd = realPath(filepath.Clean(dirPath))
		} else {
			cwd = realPath(filepath.Join(root, dirPath))
		}
	}
	return workspaceView{root: root, cwd: cwd, known: true}
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

func isSubpath(parent, child string) bool {
	rel, err := filepath.Rel(parent, child)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel))
}

// cwdOutside reports whether dir_path leaves the workspace. With no
// workspace known, an absolute or climbing dir_path does.
func cwdOutside(workspace, dirPath string) bool {
	if dirPath == "" {
		return false
	}
	if workspace == "" {
		return filepath.IsAbs(dirPath) || escapesRelative(dirPath)
	}
	v := newWorkspaceView(workspace, dirPath)
	return !isSubpath(v.root, v.cwd)
}

func escapesRelative(p string) bool {
	c := filepath.Clean(p)
	return c == ".." || strings.HasPrefix(c, "../")
}

// pathEscapes is gemini-cli's isPathEscapingWorkspace; with no workspace
// known, every path that is not a plain relative one escapes.
func (w workspaceView) pathEscapes(arg string) bool {
	if arg == "" {
		return false
	}
	if strings.ContainsAny(arg, "$`") {
		return true
	}
	if !w.known {
		return strings.HasPrefix(arg, "~") || filepath.IsAbs(arg) || escapesRelative(arg)
	}
	var target string
	switch {
	case arg == "~" || strings.HasPrefix(arg, "~/") || strings.HasPrefix(arg, `~\`):
		home, err := os.UserHomeDir()
		if err != nil {
			return true
		}
		target = filepath.Join(home, arg[min(2, len(arg)):])
	case strings.HasPrefix(arg, "~"):
		return true
	case filepath.IsAbs(arg):
		target = filepath.Clean(arg)
	default:
		target = filepath.Join(w.cwd, arg)
	}
	if !isSubpath(w.root, target) {
		return true
	}
	for cur := target; isSubpath(w.root, cur) && cur != filepath.Dir(cur); cur = filepath.Dir(cur) {
		if st, err := os.Lstat(cur); err == nil && st.Mode()&os.ModeSymlink != 0 {
			if real, err := filepath.EvalSymlinks(cur); err == nil && !isSubpath(w.root, real) {
				return true
			}
		}
	}
	return false
}

// isFlagNotFile: an argument starting with "-" is a flag unless a file of
// that name exists in the working directory.
func (w workspaceView) isFlagNotFile(arg string) bool {
	if !w.known {
		return true
	}
	_, err := os.Lstat(filepath.Join(w.cwd, arg))
	return err != nil
}

// isKnownSafeCommand: a read-only command whose paths stay in the
// workspace, or `bash -c`/`-lc` of a script made only of such commands.
func isKnownSafeCommand(args []string, w workspaceView, pool *sync.Pool) bool {
	if len(args) == 0 {
		return false
	}
	norm := make([]string, len(args))
	for i, a := range args {
		if a == "zsh" {
			a = "bash"
		}
		norm[i] = a
	}
	if isSafeToCallWithExec(norm, w) {
		return true
	}
	if len(norm) == 3 && norm[0] == "bash" && (norm[1] == "-lc" || norm[1] == "-c") {
		script := norm[2]
		if strings.ContainsAny(script, "()<>") {
			return false
		}
		cmds := splitCommands(script, pool)
		if len(cmds) == 0 {
			return false
		}
		for _, c := range cmds {
			c = strings.TrimSpace(c)
			if c == "" {
				continue
			}
			parsed, err := shellArgs(c)
			if err != nil {
				return false
			}
			if len(parsed) == 0 {
				continue
			}
			if !isSafeToCallWithExec(parsed, w) {
				return false
			}
		}
		return true
	}
	return false
}

func isSafeToCallWithExec(args []string, w workspaceView) bool {
	if len(args) == 0 {
		return false
	}
	cmd := args[0]
	if w.known && !isSubpath(w.root, w.cwd) {
		return false
	}
	if safeCommands[cmd] {
		switch {
		case cmd == "cd":
			hasPath := false
			for _, a := range args[1:] {
				if strings.HasPrefix(a, "-") {
					continue
				}
				hasPath = true
				if w.pathEscapes(a) {
					return false
				}
			}
			return hasPath || !w.pathEscapes("~")
		case fileReadingCommands[cmd]:
			return fileArgsInside(args, w, false)
		case cmd == "grep":
			return fileArgsInside(args, w, true)
		}
		return true
	}
	switch {
	case cmd == "base64":
		if base64Unsafe(args) {
			return false
		}
		return plainArgsInside(args, w)
	case cmd == "find":
		for _, a := range args {
			if unsafeFindOptions[a] {
				return false
			}
		}
		return plainArgsInside(args, w)
	case isRipgrep(cmd):
		if !isTrustedCommandPath(cmd) {
			return false
		}
		for _, a := range args[1:] {
			if rgUnsafe(a) {
				return false
			}
		}
		return fileArgsInside(args, w, true)
	case cmd == "git":
		if gitConfigOverride(args) {
			return false
		}
		idx, sub := findGitSubcommand(args)
		switch sub {
		case "":
			return false
		case "branch":
			return gitArgsReadOnly(args[idx+1:]) && gitBranchReadOnly(args[idx+1:])
		default:
			return gitArgsReadOnly(args[idx+1:])
		}
	case cmd == "sed":
		if len(args) <= 4 && len(args) > 2 && args[1] == "-n" && validSedN(args[2]) {
			return len(args) < 4 || !w.pathEscapes(args[3])
		}
		return false
	}
	return false
}

func plainArgsInside(args []string, w workspaceView) bool {
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "-") {
			continue
		}
		if w.pathEscapes(a) {
			return false
		}
	}
	return true
}

// fileArgsInside checks the path arguments of a file-reading command;
// withFile: -f/--file take a pattern file (grep, rg).
func fileArgsInside(args []string, w workspaceView, withFile bool) bool {
	dd := false
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !dd {
			if a == "--" {
				dd = true
				continue
			}
			if a == "-" {
				continue
			}
			if withFile && (strings.HasPrefix(a, "-f") || strings.HasPrefix(a, "--file")) {
				var fa string
				switch {
				case strings.HasPrefix(a, "--file="):
					fa = a[7:]
				case a == "--file":
					i++
					if i < len(args) {
						fa = args[i]
					}
				case len(a) > 2:
					fa = a[2:]
				default:
					i++
					if i < len(args) {
						fa = args[i]
					}
				}
				if fa != "" && w.pathEscapes(fa) {
					return false
				}
				continue
			}
			if strings.HasPrefix(a, "-") {
				if eq := strings.IndexByte(a, '='); eq >= 0 {
					if w.pathEscapes(a[eq+1:]) {
						return false
					}
					continue
				}
				if w.isFlagNotFile(a) {
					continue
				}
			}
		}
		if w.pathEscapes(a) {
			return false
		}
	}
	return true
}

// containsGitCommand: git (or git.exe, any directory) in command position:
// first, or after sudo, env, time, an operator, or VAR=value words.
func containsGitCommand(args []string) bool {
	for i, a := range args {
		t := strings.TrimSpace(a)
		if t == "" {
			continue
		}
		b := strings.ToLower(filepath.Base(t))
		if b != "git" && b != "git.exe" {
			continue
		}
		p := i - 1
		for p >= 0 && envAssignRE().MatchString(args[p]) {
			p--
		}
		if p >= 0 {
			switch strings.ToLower(args[p]) {
			case "sudo", "env", "time", "&&", "||", ";", "|", "&", "(", `\n`:
			default:
				continue
			}
		}
		return true
	}
	return false
}

var envAssignRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*=`) })
