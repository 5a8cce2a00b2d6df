package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/internal/shellexec"
)

const (
	// shellWaitDelay is how long a command's output pipes may stay open
	// after the shell itself has exited or been killed: a process that left
	// the group ("cmd &" followed by setsid, a daemon) may hold them
	// forever, and Execute must not wait for it.
	shellWaitDelay = 500 * time.Millisecond
	// defaultBackgroundDelay is how long is_background waits before
	// returning, to report a command that fails at once (gemini-cli's
	// BACKGROUND_DELAY_MS).
	defaultBackgroundDelay = 200 * time.Millisecond
)

// errShellTimeout is the cause of a command stopped by Config.ShellTimeout.
var errShellTimeout = errors.New("shell command timed out")

// shellTool is run_shell_command: bash -c in its own process group.
type shellTool struct {
	ws      *Workspace
	timeout time.Duration
	env     []string
	tempDir string
	procs   *procTracker
	decl    *genai.FunctionDeclaration
}

const shellDescription = "This tool executes a given shell command as `bash -c <command>`. To run a command in the background, set the `is_background` parameter to true. Do NOT use `&` to background commands. Command is executed as a subprocess that leads its own process group. Command process group can be terminated as `kill -- -PGID` or signaled as `kill -s SIGNAL -- -PGID`." + `

      Efficiency Guidelines:
      - Quiet Flags: Always prefer silent or quiet flags (e.g., ` + "`npm install --silent`, `git --no-pager`" + `) to reduce output volume while still capturing necessary information.
      - Pagination: Always disable terminal pagination to ensure commands terminate (e.g., use ` + "`git --no-pager`, `systemctl --no-pager`, or set `PAGER=cat`" + `).

      The following information is returned:

      Output: Combined stdout/stderr. Can be ` + "`(empty)`" + ` or partial on error and for any unwaited background processes.
      Exit Code: Only included if non-zero (command failed).
      Error: Only included if a process-level error occurred (e.g., spawn failure).
      Signal: Only included if process was terminated by a signal.
      Background PIDs: Only included if background processes were started.
      Process Group PGID: Only included if available.`

func newShellTool(cfg Config, procs *procTracker) *shellTool {
	return &shellTool{
		ws:      cfg.Workspace,
		timeout: cfg.ShellTimeout,
		env:     cfg.Env,
		tempDir: cfg.TempDir,
		procs:   procs,
		decl: &genai.FunctionDeclaration{
			Name:        "run_shell_command",
			Description: shellDescription,
			ParametersJsonSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"command": map[string]any{
						"type":        "string",
						"description": "Exact bash command to execute as `bash -c <command>`",
					},
					"description": map[string]any{
						"type":        "string",
						"description": "Brief description of the command for the user. Be specific and concise. Ideally a single sentence. Can be up to 3 sentences for clarity. No line breaks.",
					},
					"dir_path": map[string]any{
						"type":        "string",
						"description": "(OPTIONAL) The path of the directory to run the command in. If not provided, the project root directory is used. Must be a directory within the workspace and must already exist.",
					},
					"is_background": map[string]any{
						"type":        "boolean",
						"description": "Set to true if this command should be run in the background (e.g. for long-running servers or watchers). The command will be started, allowed to run for a brief moment to check for immediate errors, and then moved to the background.",
					},
					"delay_ms": map[string]any{
						"type":        "integer",
						"description": "Optional. Delay in milliseconds to wait after starting the process in the background. Useful to allow the process to start and generate initial output before returning.",
					},
				},
				"required": []string{"command"},
			},
		},
	}
}

func (t *shellTool) Name() string                            { return "run_shell_command" }
func (t *shellTool) DisplayName() string                     { return "Shell" }
func (t *shellTool) Kind() Kind                              { return KindExecute }
func (t *shellTool) Declaration() *genai.FunctionDeclaration { return t.decl }

func (t *shellTool) Describe(a map[string]any) string {
	d := argString(a, "command")
	if dir := argString(a, "dir_path"); dir != "" {
		d += " [in " + dir + "]"
	}
	if b, _ := args(a).boolean("is_background", false); b {
		d += " [background]"
	}
	return d
}

// shellRequest is a parsed run_shell_command call.
type shellRequest struct {
	command    string
	dir        string
	background bool
	delay      time.Duration
}

func (t *shellTool) parse(a args) (shellRequest, error) {
	var r shellRequest
	cmd, err := a.requiredStr("command")
	if err != nil {
		return r, err
	}
	if strings.TrimSpace(cmd) == "" {
		return r, Errorf(ErrInvalidParams, "Command cannot be empty.")
	}
	r.command = cmd
	if _, err := a.str("description"); err != nil {
		return r, err
	}
	// additional_permissions asks gemini-cli's sandbox for more access;
	// agentry runs commands unsandboxed, so it is accepted and ignored.
	if r.background, err = a.boolean("is_background", false); err != nil {
		return r, err
	}
	r.delay = defaultBackgroundDelay
	if ms, ok, err := a.minInteger("delay_ms", 0); err != nil {
		return r, err
	} else if ok {
		r.delay = time.Duration(ms) * time.Millisecond
	}
	dirPath, err := a.str("dir_path")
	if err != nil {
		return r, err
	}
	r.dir = t.ws.Root()
	if dirPath != "" {
		if r.dir, err = t.ws.Resolve(dirPath); err != nil {
			return r, err
		}
		fi, err := os.Stat(r.dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return r, Errorf(ErrFileNotFound, "Directory does not exist: %s. dir_path must be an existing directory within the workspace.", r.dir)
		case err != nil:
			return r, &Error{Type: ErrShellExecute, Msg: fmt.Sprintf("Cannot use directory %s: %v", r.dir, err), Err: err}
		case !fi.IsDir():
			return r, Errorf(ErrPathIsNotDirectory, "Path is not a directory: %s. dir_path must be an existing directory within the workspace.", r.dir)
		}
	}
	return r, nil
}

func (t *shellTool) Execute(ctx context.Context, call Call) (Result, error) {
	if ctx.Err() != nil {
		return Result{}, &Error{Type: ErrCancelled, Msg: "Command was cancelled by user before it could start.", Err: context.Cause(ctx)}
	}
	req, err := t.parse(args(call.Args))
	if err != nil {
		return Result{}, err
	}
	if req.background {
		return t.runBackground(ctx, req)
	}
	return t.runForeground(ctx, call, req)
}

// environ is the commands' environment: Config.Env or the process's less
// what envredact.Default withholds, with shellexec's markers.
func (t *shellTool) environ() []string { return shellexec.Environ(t.env) }

func (t *shellTool) tempRoot() string {
	if t.tempDir != "" {
		return t.tempDir
	}
	return os.TempDir()
}

// killGroup sends SIGKILL to the process group pgid.
func killGroup(pgid int) error { return shellexec.SignalGroup(pgid, syscall.SIGKILL) }

func (t *shellTool) runForeground(ctx context.Context, call Call, req shellRequest) (Result, error) {
	tmp, err := os.MkdirTemp(t.tempRoot(), "agentry-shell-")
	if err != nil {
		return Result{}, &Error{Type: ErrShellExecute, Msg: fmt.Sprintf("Failed to create a temporary directory for the command: %v", err), Err: err}
	}
	defer os.RemoveAll(tmp)
	pidFile := filepath.Join(tmp, "bgpids")

	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if t.timeout > 0 {
		runCtx, cancel = context.WithTimeoutCause(ctx, t.timeout, errShellTimeout)
	}
	defer cancel()

	out := newShellOutput()
	// On cancellation or timeout the whole group is killed at once, so
	// that children and grandchildren die with the shell; jobs the
	// command left running on its own are the tracker's (below).
	exit, err := shellexec.Run(runCtx, shellexec.Spec{
		Script:   wrapForBackgroundPIDs(req.command, pidFile),
		Dir:      req.dir,
		Env:      t.environ(),
		Drain:    shellWaitDelay,
		KeepJobs: true,
	}, func(c shellexec.Chunk) {
		out.add(c)
		if call.Output != nil {
			call.Output(c.Text)
		}
	})
	if err != nil {
		if !errors.Is(err, shellexec.ErrStart) {
			return Result{}, &Error{Type: ErrCancelled, Msg: "Command was cancelled by user before it could start.", Err: context.Cause(runCtx)}
		}
		return Result{}, &Error{Type: ErrShellExecute, Msg: fmt.Sprintf("Error: failed to start command %q: %v", req.command, err), Err: err}
	}
	pid := exit.PID
	// The group dies with agentry while the command runs; afterwards only
	// if it left jobs running, which the tracker then owns.
	guard := exit.Guard
	tracked := false
	defer func() {
		if !tracked {
			guard.Close()
		}
	}()

	if ctx.Err() != nil {
		// The group was killed; the caller gave up on it.
		return Result{}, &Error{Type: ErrCancelled, Msg: cancelledMessage("Command was cancelled by user before it could complete.", out), Err: context.Cause(ctx)}
	}

	o := outcomeOf(exit.State, pid)
	data := map[string]any{
		"exitCode": o.exitCode,
		"stdout":   out.stdout.String(),
		"stderr":   out.stderr.String(),
		"pid":      pid,
		"pgid":     pid,
	}
	if o.signal != 0 {
		data["signal"] = o.signal
	}

	if errors.Is(context.Cause(runCtx), errShellTimeout) {
		data["timedOut"] = true
		head := fmt.Sprintf("Command was automatically cancelled because it exceeded the timeout of %s.", formatTimeout(t.timeout))
		display := head
		if o := out.forModel(); o != "" {
			display += "\n\nOutput before cancellation:\n" + o
		}
		return Result{LLMContent: wrapUntrusted(cancelledMessage(head, out)), Display: display, Data: data}, nil
	}

	if o.background = readBackgroundPIDs(pidFile, pid); len(o.background) > 0 {
		data["backgroundPIDs"] = o.background
		// Processes left running in the command's group are killed when
		// the tool set closes.
		t.procs.trackGroup(pid, o.background, guard)
		tracked = true
	}
	o.output = out.forModel()
	return Result{LLMContent: o.llmContent(), Display: o.display(), Data: data}, nil
}

// shellOutcome is how a command ended, as the model is told.
type shellOutcome struct {
	output     string
	exitCode   int // -1 when killed by a signal
	signal     int
	pgid       int
	background []int // jobs left running
}

func outcomeOf(st *os.ProcessState, pgid int) shellOutcome {
	o := shellOutcome{exitCode: -1, pgid: pgid}
	if st != nil {
		o.exitCode = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			o.signal = int(ws.Signal())
		}
	}
	return o
}

// llmContent renders the outcome in gemini-cli's format: "Output:" always,
// then "Exit Code:", "Signal:" and "Background PIDs:" when they apply, and
// the process group, all inside <untrusted_context>.
func (o shellOutcome) llmContent() string {
	parts := []string{"Output: " + orEmpty(o.output)}
	if o.signal == 0 && o.exitCode != 0 {
		parts = append(parts, fmt.Sprintf("Exit Code: %d", o.exitCode))
	}
	if o.signal != 0 {
		parts = append(parts, fmt.Sprintf("Signal: %d", o.signal))
	}
	if len(o.background) > 0 {
		parts = append(parts, "Background PIDs: "+joinInts(o.background))
	}
	parts = append(parts, fmt.Sprintf("Process Group PGID: %d", o.pgid))
	return wrapUntrusted(strings.Join(parts, "\n"))
}

// display is what the user sees of the outcome, gemini-cli's returnDisplay:
// the output when there is any, else how the command ended ("" when it
// succeeded silently).
func (o shellOutcome) display() string {
	switch {
	case strings.TrimSpace(o.output) != "":
		return o.output
	case o.signal != 0:
		return fmt.Sprintf("Command terminated by signal: %d", o.signal)
	case o.exitCode != 0:
		return fmt.Sprintf("Command exited with code: %d", o.exitCode)
	}
	return ""
}

// cancelledMessage is gemini-cli's report of a stopped command.
func cancelledMessage(head string, out *shellOutput) string {
	if o := out.forModel(); o != "" {
		return head + " Below is the output before it was cancelled:\n" + o
	}
	return head + " There was no output before it was cancelled."
}

func formatTimeout(d time.Duration) string {
	if d >= time.Minute {
		return fmt.Sprintf("%.1f minutes", d.Minutes())
	}
	return fmt.Sprintf("%g seconds", d.Seconds())
}

func orEmpty(s string) string {
	if s == "" {
		return "(empty)"
	}
	return s
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// wrapForBackgroundPIDs runs command in a subshell whose EXIT trap writes
// the PIDs of the jobs it left running to pidFile, as gemini-cli does to
// report "Background PIDs". Newlines around the command keep heredocs and
// trailing comments intact.
func wrapForBackgroundPIDs(command, pidFile string) string {
	c := strings.TrimSpace(command)
	if strings.HasSuffix(c, `\`) {
		c += " "
	}
	return "_bgpids_file=" + shellQuote(pidFile) + "\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n" + c + "\n)\n__code=$?\nexit $__code"
}

// shellQuote quotes s for bash.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// readBackgroundPIDs reads the PIDs the wrapper recorded, less the shell's.
func readBackgroundPIDs(pidFile string, shellPID int) []int {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil && n != shellPID {
			pids = append(pids, n)
		}
	}
	return pids
}
