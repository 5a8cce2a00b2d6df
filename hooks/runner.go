package hooks

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentry-dev/agentry/internal/envredact"
)

// Config configures a Runner.
type Config struct {
	// Settings are the hooks and their switches.
	Settings Settings
	// ProjectDir is the project root: the default cwd of hooks and the value
	// of GEMINI_PROJECT_DIR, CLAUDE_PROJECT_DIR and AGENTRY_PROJECT_DIR.
	ProjectDir string
	// SessionID is passed to hooks as session_id and GEMINI_SESSION_ID.
	SessionID string
	// TranscriptPath is passed to hooks as transcript_path.
	TranscriptPath string
	// Env is the hooks' base environment; nil means os.Environ() less
	// what envredact.Default withholds (secrets). A hook's own env is
	// added to it.
	Env []string
	// DefaultDecision stands in for the answer of a hook that failed (see
	// Failure): "allow" (the default, as in gemini-cli, where a broken hook
	// never blocks) or "deny" for fail-closed setups.
	DefaultDecision string
	// KillGrace is the time between SIGTERM and SIGKILL for a hook that
	// overran its timeout or was cancelled; zero means DefaultKillGrace.
	KillGrace time.Duration
	// Logger receives debug and warning records; nil discards them.
	Logger *slog.Logger
}

// entry is one hook command as registered for an event.
type entry struct {
	cmd        Command
	matcher    string         // trimmed
	re         *regexp.Regexp // compiled matcher for tool events; nil if invalid
	sequential bool
}

// matches reports whether the entry runs for target, following
// gemini-cli's HookPlanner.matchesContext.
func (e entry) matches(kind matchKind, target string) bool {
	// No matcher, a wildcard, or no target to compare with: run. gemini-cli
	// also runs every hook when an event carries no tool name or trigger.
	if e.matcher == "" || e.matcher == "*" || target == "" {
		return true
	}
	switch kind {
	case matchRegexp:
		if e.re == nil {
			// Not a valid (RE2) expression: gemini-cli compares literally.
			return e.matcher == target
		}
		// Unanchored, as JavaScript's RegExp.test.
		return e.re.MatchString(target)
	case matchLiteral:
		return e.matcher == target
	default:
		return true
	}
}

// Runner runs the configured hooks. It is safe for concurrent use.
type Runner struct {
	cfg         Config
	events      map[Event][]entry
	enabled     bool
	defaultDeny bool
	grace       time.Duration
	log         *slog.Logger
}

// New validates cfg and prepares a Runner. Hooks listed in
// hooksConfig.disabled are dropped here; with hooksConfig.enabled false
// no hook ever runs.
func New(cfg Config) (*Runner, error) {
	if err := cfg.Settings.Validate(); err != nil {
		return nil, fmt.Errorf("hooks: invalid settings: %w", err)
	}
	r := &Runner{
		cfg:     cfg,
		events:  make(map[Event][]entry),
		enabled: cfg.Settings.HooksConfig.IsEnabled(),
		grace:   cfg.KillGrace,
		log:     cfg.Logger,
	}
	switch strings.ToLower(cfg.DefaultDecision) {
	case "", DecisionAllow:
	case DecisionDeny, DecisionBlock:
		r.defaultDeny = true
	default:
		return nil, fmt.Errorf("hooks: DefaultDecision %q: want %q or %q", cfg.DefaultDecision, DecisionAllow, DecisionDeny)
	}
	if r.grace <= 0 {
		r.grace = DefaultKillGrace
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	disabled := cfg.Settings.HooksConfig.Disabled
	for event, defs := range cfg.Settings.Hooks {
		kind := event.matchKind()
		for _, def := range defs {
			m := strings.TrimSpace(def.Matcher)
			var re *regexp.Regexp
			if kind == matchRegexp && m != "" && m != "*" {
				var err error
				if re, err = regexp.Compile(m); err != nil {
					r.log.Warn("hook matcher is not a valid regular expression; matching it literally",
						"event", event, "matcher", m, "error", err)
				}
			}
			for _, c := range def.Hooks {
				if slices.Contains(disabled, c.ID()) {
					r.log.Debug("hook disabled by settings", "event", event, "hook", c.ID())
					continue
				}
				r.events[event] = append(r.events[event], entry{cmd: c, matcher: m, re: re, sequential: def.Sequential})
			}
		}
	}
	return r, nil
}

// Has reports whether any enabled hook is configured for event, whatever
// its matcher. Callers use it to skip building an event's input.
func (r *Runner) Has(event Event) bool {
	return r != nil && r.enabled && len(r.events[event]) > 0
}

// Notifications reports whether a UI should show hook activity
// (hooksConfig.notifications).
func (r *Runner) Notifications() bool {
	return r.cfg.Settings.HooksConfig.NotificationsEnabled()
}

// plan selects the entries to run for target, dropping duplicates (same
// name and command), and tells whether they run one after the other.
func (r *Runner) plan(event Event, target string) (entries []entry, sequential bool) {
	kind := event.matchKind()
	seen := make(map[string]bool)
	for _, e := range r.events[event] {
		if !e.matches(kind, target) {
			continue
		}
		if k := e.cmd.dedupKey(); seen[k] {
			continue
		} else {
			seen[k] = true
		}
		entries = append(entries, e)
		sequential = sequential || e.sequential
	}
	return entries, sequential
}

// Run runs the hooks configured for event whose matcher accepts target
// (the tool name for tool events; the source, reason or trigger for
// SessionStart, SessionEnd and PreCompress; "" otherwise), feeding each
// the base fields (session_id, transcript_path, cwd, hook_event_name,
// timestamp) with input merged over them, and combines their answers.
//
// Hook failures never make Run fail: they are listed in Result.Failures
// and Config.DefaultDecision applies. Run returns an error only for the
// caller's mistakes (an unknown event, input that cannot be encoded as
// JSON) and, with the partial result, when ctx ends first.
func (r *Runner) Run(ctx context.Context, event Event, target string, input map[string]any) (Result, error) {
	if !event.Valid() {
		return Result{Continue: true}, fmt.Errorf("hooks: %q: %w", event, ErrUnknownEvent)
	}
	if !r.Has(event) {
		return Result{Continue: true}, nil
	}
	entries, sequential := r.plan(event, target)
	if len(entries) == 0 {
		return Result{Continue: true}, nil
	}
	if err := ctx.Err(); err != nil {
		return Result{Continue: true}, fmt.Errorf("hooks: %s: %w", event, err)
	}
	full := r.baseInput(event)
	maps.Copy(full, input)
	// Catch unencodable input once, before any hook starts.
	if _, err := marshalInput(full); err != nil {
		return Result{Continue: true}, err
	}
	r.log.Debug("running hooks", "event", event, "target", target, "count", len(entries), "sequential", sequential)

	var results []hookResult
	if sequential {
		results = r.runSequential(ctx, event, entries, full)
	} else {
		results = r.runParallel(ctx, event, entries, full)
	}
	res := r.aggregate(event, results)
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("hooks: %s: %w", event, err)
	}
	return res, nil
}

// baseInput is gemini-cli's createBaseInput.
func (r *Runner) baseInput(event Event) map[string]any {
	return map[string]any{
		"session_id":      r.cfg.SessionID,
		"transcript_path": r.cfg.TranscriptPath,
		"cwd":             r.cfg.ProjectDir,
		"hook_event_name": string(event),
		// toISOString's layout: UTC, milliseconds, Z.
		"timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00"),
	}
}

// hookResult is one hook's outcome.
type hookResult struct {
	output  *hookOutput // nil when the hook said nothing or failed
	success bool        // exited 0 with a usable answer (gates sequential rewrites)
	failure *Failure
}

func (r *Runner) runParallel(ctx context.Context, event Event, entries []entry, input map[string]any) []hookResult {
	results := make([]hookResult, len(entries))
	var wg sync.WaitGroup
	for i, e := range entries {
		wg.Go(func() { results[i] = r.runHook(ctx, event, e.cmd, input) })
	}
	wg.Wait()
	return results
}

// runSequential runs the hooks in order, each seeing the rewrites of the
// ones before it that succeeded (gemini-cli's applyHookOutputToInput).
func (r *Runner) runSequential(ctx context.Context, event Event, entries []entry, input map[string]any) []hookResult {
	results := make([]hookResult, 0, len(entries))
	current := input
	for _, e := range entries {
		if ctx.Err() != nil {
			break
		}
		res := r.runHook(ctx, event, e.cmd, current)
		results = append(results, res)
		if res.success && res.output != nil {
			current = applyOutputToInput(event, current, res.output.HookSpecificOutput)
		}
	}
	return results
}

// applyOutputToInput returns a copy of input with a hook's rewrites applied
// for the next hook: BeforeAgent context is appended to the prompt,
// BeforeModel llm_request and BeforeTool tool_input are merged in.
func applyOutputToInput(event Event, input, specific map[string]any) map[string]any {
	if specific == nil {
		return input
	}
	out := maps.Clone(input)
	switch event {
	case BeforeAgent:
		extra, ok1 := specific["additionalContext"].(string)
		prompt, ok2 := input["prompt"].(string)
		if ok1 && ok2 {
			out["prompt"] = prompt + "\n\n" + extra
		}
	case BeforeModel:
		if patch, ok := specific["llm_request"].(map[string]any); ok {
			if cur, ok := input["llm_request"].(map[string]any); ok {
				merged := maps.Clone(cur)
				maps.Copy(merged, patch)
				out["llm_request"] = merged
			}
		}
	case BeforeTool:
		if patch, ok := specific["tool_input"].(map[string]any); ok {
			if cur, present := input["tool_input"]; present {
				m, _ := cur.(map[string]any)
				merged := maps.Clone(m)
				if merged == nil {
					merged = make(map[string]any, len(patch))
				}
				maps.Copy(merged, patch)
				out["tool_input"] = merged
			}
		}
	}
	return out
}

// hookVars are the variables every hook gets in its environment and can
// reference as $NAME in its command. They reach the hook only through the
// environment, never as text in its command.
func (r *Runner) hookVars(input map[string]any) (vars []envVar, cwd string) {
	cwd, _ = input["cwd"].(string)
	sessionID, _ := input["session_id"].(string)
	project := r.cfg.ProjectDir
	if project == "" {
		project = cwd
	}
	return []envVar{
		{"GEMINI_PROJECT_DIR", project},
		{"GEMINI_CWD", cwd},
		{"GEMINI_SESSION_ID", sessionID},
		{"CLAUDE_PROJECT_DIR", project},
		{"AGENTRY_PROJECT_DIR", project},
		{"AGENTRY_SESSION_ID", sessionID},
	}, cwd
}

// runHook runs one command hook and reads its answer.
func (r *Runner) runHook(ctx context.Context, event Event, c Command, input map[string]any) hookResult {
	fail := func(err error, p procResult) hookResult {
		f := Failure{Hook: c.ID(), Event: event, Err: err, Stderr: excerpt(string(p.stderr)), ExitCode: p.exitCode, TimedOut: p.timedOut}
		r.log.Warn("hook failed", "event", event, "hook", c.ID(), "error", err, "stderr", f.Stderr)
		return hookResult{failure: &f}
	}
	stdin, err := marshalInput(input)
	if err != nil {
		return fail(err, procResult{exitCode: -1})
	}
	vars, cwd := r.hookVars(input)
	env := r.cfg.Env
	if env == nil {
		env = envredact.Default().Environ(os.Environ())
	}
	env = slices.Clone(env)
	for _, v := range vars {
		env = append(env, v.name+"="+v.value)
	}
	// exec keeps the last value of a duplicated key, so the hook's own env
	// wins; sort for a deterministic order.
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		env = append(env, k+"="+c.Env[k])
	}
	timeout := time.Duration(c.Timeout) * time.Millisecond
	if c.Timeout == 0 {
		timeout = DefaultTimeoutMS * time.Millisecond
	}

	names := make([]string, len(vars))
	for i, v := range vars {
		names[i] = v.name
	}
	p := runProcess(ctx, quoteReferences(c.Command, names), cwd, env, stdin, timeout, r.grace)
	switch {
	case p.startErr != nil:
		return fail(fmt.Errorf("cannot start: %w", p.startErr), p)
	case p.cancelErr != nil:
		return fail(fmt.Errorf("cancelled: %w", p.cancelErr), p)
	case p.timedOut:
		return fail(fmt.Errorf("timed out after %dms: %w", timeout.Milliseconds(), context.DeadlineExceeded), p)
	case p.signal != 0:
		return fail(fmt.Errorf("killed by signal %d (%v)", int(p.signal), p.signal), p)
	}
	out, err := parseOutput(p.stdout, p.stderr, p.exitCode)
	if err != nil {
		return fail(err, p)
	}
	r.log.Debug("hook finished", "event", event, "hook", c.ID(), "exit_code", p.exitCode)
	return hookResult{output: out, success: p.exitCode == exitSuccess}
}

// aggregate combines the hooks' answers and applies the default decision
// for the ones that failed.
func (r *Runner) aggregate(event Event, results []hookResult) Result {
	var outs []hookOutput
	var failures []Failure
	for _, h := range results {
		if h.failure != nil {
			failures = append(failures, *h.failure)
		}
		if h.output != nil {
			outs = append(outs, *h.output)
		}
	}
	res := buildResult(mergeOutputs(event, outs))
	res.Ran = len(results)
	res.Failures = failures
	if res.Ran == 0 {
		res.Decision = ""
	}
	if r.defaultDeny && len(failures) > 0 {
		res.Decision = DecisionBlock
		msgs := make([]string, 0, len(failures)+1)
		if res.Reason != "" {
			msgs = append(msgs, res.Reason)
		}
		for _, f := range failures {
			msgs = append(msgs, f.Error())
		}
		res.Reason = strings.Join(msgs, "\n")
	}
	if res.Blocked() || !res.Continue {
		res.Reason = effectiveReason(res)
	}
	return res
}
