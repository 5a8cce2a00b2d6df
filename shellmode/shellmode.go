// Package shellmode is the interactive terminal's shell mode, gemini-cli's
// "!command": the user's command runs in the workspace directory under
// bash, in a process group of its own, its output shown as it arrives, and
// the model is then told what ran and what it printed in one user history
// item, without a model call. Shell mode is stateless: each command starts
// in the workspace directory, and a "cd" is reported, not kept.
//
// The behaviour and texts are gemini-cli's
// (packages/cli/src/ui/hooks/useExecutionLifecycle.ts, which runs the
// command through packages/core/src/services/shellExecutionService.ts and
// kills it with packages/core/src/utils/process-utils.ts). Processes run
// as run_shell_command's do, on internal/shellexec.
package shellmode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentry-dev/agentry/internal/ansi"
	"github.com/agentry-dev/agentry/internal/safefs"
	"github.com/agentry-dev/agentry/internal/shellexec"
	"github.com/agentry-dev/agentry/masking"
)

const (
	// DefaultKillGrace is the time between SIGTERM and SIGKILL when a
	// command is cancelled: gemini-cli's SIGKILL_TIMEOUT_MS.
	DefaultKillGrace = 200 * time.Millisecond
	// OutputLimit is how much of a command's output the model is shown,
	// in UTF-16 code units as gemini-cli counts them (MAX_OUTPUT_LENGTH);
	// a Result keeps no more than that.
	OutputLimit = 10000
	// BinaryNotice is what out receives, once, when a command's output
	// turns out to be binary; it receives nothing more after it. The text
	// is gemini-cli's.
	BinaryNotice = "[Binary output detected. Halting stream...]"
)

const (
	// captureBytes bounds the raw output kept for the history item: the
	// OutputLimit code units take at most 3 bytes each in UTF-8, and the
	// rest leaves room for terminal escapes, which are stripped.
	captureBytes = 64 << 10
	// sniffBytes is how much of the output gemini-cli's isBinary looks
	// at for a NUL byte.
	sniffBytes = 512
	// maxPwdBytes bounds the read of the directory the command ended in.
	maxPwdBytes = 64 << 10
)

// Errors of New and Run, matched with errors.Is.
var (
	// ErrEmpty: the command is empty or only white space (gemini-cli does
	// not handle it as a shell command).
	ErrEmpty = errors.New("shellmode: empty command")
	// ErrDir: the workspace directory is missing or not a directory.
	ErrDir = errors.New("shellmode: not a directory")
)

// Config configures a Runner.
type Config struct {
	// Dir is the directory commands run in: the workspace's (gemini-cli's
	// target directory). Required.
	Dir string
	// Env is the commands' environment before agentry's markers are
	// added (see shellexec.Environ); nil is agentry's own less what
	// envredact.Default withholds. Pass the settings' redaction here.
	Env []string
	// Shell is the shell program; "" is bash, looked up in PATH.
	Shell string
	// TempDir is where each command's private directory (for the file
	// its final directory is written to) is made; "" is os.TempDir().
	TempDir string
	// KillGrace is the time between SIGTERM and SIGKILL for a cancelled
	// command; zero is DefaultKillGrace.
	KillGrace time.Duration
	// Drain bounds how long a command's output may stay open once the
	// shell has exited (a process that left its group may hold it); zero
	// is shellexec.DefaultDrain.
	Drain time.Duration
	// After returns a channel that receives once d has passed, for the
	// kill grace and the drain bound; nil is time.After. Tests inject one.
	After func(d time.Duration) <-chan time.Time
}

// Runner runs shell-mode commands in one directory. It is immutable and
// safe for concurrent use.
type Runner struct {
	cfg Config
	dir string
	env []string
}

// New returns a Runner for cfg. cfg.Dir must be an existing directory.
func New(cfg Config) (*Runner, error) {
	if cfg.Dir == "" {
		return nil, fmt.Errorf("%w: no directory given", ErrDir)
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrDir, cfg.Dir, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s", ErrDir, dir)
	}
	if cfg.KillGrace <= 0 {
		cfg.KillGrace = DefaultKillGrace
	}
	// bash takes PWD as the logical directory when it names the one it
	// starts in, so pwd prints dir as given, symlinks and all, rather than
	// a physical path that would look like a directory change.
	env := append(shellexec.Environ(cfg.Env), "PWD="+dir)
	return &Runner{cfg: cfg, dir: dir, env: env}, nil
}

// Dir returns the directory commands run in.
func (r *Runner) Dir() string { return r.dir }

// Result is how a command ended and what it printed.
type Result struct {
	// ExitCode is the shell's exit code, -1 when a signal killed it.
	ExitCode int
	// Signal is the signal that killed the shell, 0 if none did.
	Signal syscall.Signal
	// Cancelled reports that the command was cancelled while it ran.
	Cancelled bool
	// Dir is the directory the command ended in, as its pwd printed it;
	// "" when it did not get that far (it exited, or was killed).
	Dir string
	// DirChanged reports that Dir is not the directory the command
	// started in.
	DirChanged bool
	// Output is what the command printed on stdout and stderr, in the
	// order printed, with terminal escapes removed and white space
	// trimmed: at most OutputLimit UTF-16 code units of it.
	Output string
	// Truncated reports that the command printed more than Output holds.
	Truncated bool
	// Binary reports that the output was binary (a NUL byte in its first
	// 512 bytes, as gemini-cli decides); Output is then empty.
	Binary bool
}

// Run runs command in the Runner's directory, wrapped as gemini-cli wraps
// it to learn the directory it ends in, and passes its output (stdout and
// stderr, in the order written, terminal escapes included) to out as it
// arrives, on the calling goroutine. out may be nil.
//
// When ctx ends while the command runs, its whole process group gets
// SIGTERM, then SIGKILL after the kill grace; whatever the command leaves
// running in its group is SIGKILLed once the shell has exited. Run returns
// an error only when the command did not run: it is empty (ErrEmpty), ctx
// had ended already, or it could not be started.
func (r *Runner) Run(ctx context.Context, command string, out func(chunk string)) (Result, error) {
	script := masking.TrimJS(command)
	if script == "" {
		return Result{}, ErrEmpty
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("shellmode: not run: %w", context.Cause(ctx))
	}
	tmp, err := os.MkdirTemp(r.cfg.TempDir, "agentry-shellmode-") // mode 0700
	if err != nil {
		return Result{}, fmt.Errorf("shellmode: a directory for the command: %w", err)
	}
	defer os.RemoveAll(tmp)
	pwdFile := filepath.Join(tmp, "pwd.tmp")
	if strings.HasSuffix(script, `\`) {
		script += " " // or the backslash would join the closing brace's line
	}
	script = "{\n" + script + "\n}\n__code=$?; pwd > " + shellQuote(pwdFile) + "; exit $__code"

	var c capture
	exit, err := shellexec.Run(ctx, shellexec.Spec{
		Script:   script,
		Shell:    r.cfg.Shell,
		Dir:      r.dir,
		Env:      r.env,
		Combined: true,
		Grace:    r.cfg.KillGrace,
		Drain:    r.cfg.Drain,
		After:    r.cfg.After,
	}, func(ch shellexec.Chunk) {
		wasBinary := c.binary
		c.write(ch.Text)
		switch {
		case out == nil:
		case c.binary && !wasBinary:
			out(BinaryNotice)
		case !c.binary:
			out(ch.Text)
		}
	})
	if err != nil {
		return Result{}, fmt.Errorf("shellmode: %w", err)
	}

	res := Result{ExitCode: -1, Cancelled: exit.Cancelled, Binary: c.binary}
	if st := exit.State; st != nil {
		res.ExitCode = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = ws.Signal()
		}
	}
	if !res.Binary {
		res.Output, res.Truncated = c.text()
	}
	if b, err := safefs.ReadFile(pwdFile, maxPwdBytes); err == nil {
		res.Dir = masking.TrimJS(string(b))
		res.DirChanged = res.Dir != "" && !sameDir(res.Dir, r.dir)
	}
	return res, nil
}

// sameDir reports whether a and b name one directory: equal paths, or two
// spellings (through a symlink) of it, which is no change of directory.
func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// HistoryText is the user history item the model is given for command
// and its result, exactly as gemini-cli's addShellCommandToGeminiHistory
// (useExecutionLifecycle.ts) writes it: the output (or a note that there
// was none, or that it was binary), after a status line when the command
// was cancelled, killed by a signal or failed, after the stateless-
// directory warning when it changed directory; capped at OutputLimit code
// units; backslashes and backticks escaped so that neither the command
// nor its output can close the fences.
func (r Result) HistoryText(command string) string {
	var main string
	switch {
	case r.Binary:
		main = "[Command produced binary output, which is not shown.]"
	case r.Output == "":
		main = "(Command produced no output)"
	default:
		main = r.Output
	}
	var prefix string
	switch {
	case r.Cancelled:
		prefix = "Command was cancelled."
	case r.Signal != 0:
		prefix = fmt.Sprintf("Command terminated by signal: %d.", int(r.Signal))
	case r.ExitCode != 0:
		prefix = fmt.Sprintf("Command exited with code %d.", r.ExitCode)
	}
	if prefix != "" {
		main = prefix + "\n" + main
	}
	if r.DirChanged && r.Dir != "" {
		main = "WARNING: shell mode is stateless; the directory change to '" + r.Dir + "' will not persist.\n\n" + main
	}
	// Output beyond what r holds makes the whole longer than the limit.
	if r.Truncated || masking.UTF16Len(main) > OutputLimit {
		main = masking.UTF16Head(main, OutputLimit) + "\n... (truncated)"
	}
	return "I ran the following shell command:\n```sh\n" + escapeFences(command) +
		"\n```\n\nThis produced the following result:\n```\n" + escapeFences(main) + "\n```"
}

// escapeFences escapes backslashes and backticks, as gemini-cli does
// against prompt injection through the fences.
func escapeFences(s string) string {
	return strings.NewReplacer(`\`, `\\`, "`", "\\`").Replace(s)
}

// shellQuote quotes s for bash.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// capture keeps what the history item can use of a command's output:
// leading white space skipped, then at most captureBytes. It also decides,
// as gemini-cli does, whether the output is binary.
type capture struct {
	sniffed int // bytes of output looked at for a NUL
	binary  bool
	started bool // past the leading white space
	head    []byte
	more    bool // output beyond head was dropped
}

func (c *capture) write(s string) {
	if c.binary {
		return
	}
	if c.sniffed < sniffBytes {
		n := min(len(s), sniffBytes-c.sniffed)
		c.sniffed += n
		if strings.IndexByte(s[:n], 0) >= 0 {
			c.binary, c.head = true, nil
			return
		}
	}
	if !c.started {
		s = strings.TrimLeft(s, " \t\n\v\f\r")
		if s == "" {
			return
		}
		c.started = true
	}
	if room := captureBytes - len(c.head); room < len(s) {
		c.more = true
		s = s[:room]
	}
	c.head = append(c.head, s...)
}

// text returns the kept output as the history item shows it, and whether
// the command printed more.
func (c *capture) text() (string, bool) {
	s := strings.ToValidUTF8(ansi.Strip(string(c.head)), "\uFFFD")
	if c.more {
		// The cut may fall inside a character; what follows the head is
		// not white space to trim.
		s = strings.TrimRight(s, "\uFFFD")
		s = strings.TrimLeftFunc(s, masking.IsJSSpace)
	} else {
		s = masking.TrimJS(s)
	}
	if masking.UTF16Len(s) > OutputLimit {
		return masking.UTF16Head(s, OutputLimit), true
	}
	return s, c.more
}
