// Package hooks runs gemini-cli compatible command hooks: shell commands
// configured in settings that are started at fixed points of an agent run
// (before a tool call, after a model response, at session start, ...),
// receive a JSON description of the event on stdin and answer with a JSON
// object (or plain text and an exit code) that can allow, block or rewrite
// what the agent is about to do.
//
// The settings format, the matching rules, the process contract and the way
// several hooks' answers are combined follow gemini-cli's
// packages/core/src/hooks so that hook scripts written for gemini-cli (and,
// through the CLAUDE_PROJECT_DIR variable, many written for Claude Code)
// work unchanged.
//
// Differences from gemini-cli, each deliberate:
//
//   - Settings.Validate and New reject unknown events and malformed hooks
//     instead of skipping them with a warning.
//   - A hook that crashes is a Failure, not a decision: exit codes 126, 127
//     and 128+N (the shell's "not executable", "not found" and "killed by
//     signal N") and a JSON object that cannot be read on exit 0 no longer
//     count as "every other exit code blocks". Config.DefaultDecision
//     decides for failures.
//   - A silent hook exiting 2 (or another blocking code) blocks with the
//     default reason; gemini-cli ignores it.
//   - The process group is signalled, not just the shell, and is killed
//     when the shell exits, so no background process outlives the call.
//   - tool_input and llm_request overrides of several hooks are merged key
//     by key instead of the last hook's object replacing the others.
//   - $VAR substitution stops at a name boundary; the PROJECT_DIR variables
//     are Config.ProjectDir (gemini-cli uses the cwd; they agree unless the
//     caller overrides cwd); GEMINI_PLANS_DIR is not provided.
//   - BeforeToolSelection reports no ToolConfig when no hook gave one
//     (gemini-cli reports AUTO with no names).
//   - Matchers are Go (RE2) regular expressions; JavaScript-only syntax such
//     as look-ahead is invalid and so compared literally.
package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Event names a point in an agent run at which hooks fire. The values are
// spelled exactly as in gemini-cli settings files.
type Event string

// The events gemini-cli defines.
const (
	// BeforeTool fires before a tool runs; hooks can block it or rewrite its
	// arguments. The matcher is a regular expression on the tool name.
	BeforeTool Event = "BeforeTool"
	// AfterTool fires after a tool ran; hooks can hide its result or add
	// context. The matcher is a regular expression on the tool name.
	AfterTool Event = "AfterTool"
	// BeforeAgent fires after the user submitted a prompt, before planning.
	BeforeAgent Event = "BeforeAgent"
	// AfterAgent fires once per turn after the final response.
	AfterAgent Event = "AfterAgent"
	// Notification fires when the agent raises an alert such as a tool
	// permission request. It is observational only.
	Notification Event = "Notification"
	// SessionStart fires at startup, resume or clear; the matcher is compared
	// exactly with that source.
	SessionStart Event = "SessionStart"
	// SessionEnd fires when a session ends; the matcher is compared exactly
	// with the reason.
	SessionEnd Event = "SessionEnd"
	// PreCompress fires before history compression; the matcher is compared
	// exactly with the trigger ("auto" or "manual").
	PreCompress Event = "PreCompress"
	// BeforeModel fires before a model request; hooks can rewrite the request
	// or supply a synthetic response.
	BeforeModel Event = "BeforeModel"
	// AfterModel fires after a model response (chunk); hooks can replace it.
	AfterModel Event = "AfterModel"
	// BeforeToolSelection fires before the model chooses tools; hooks can
	// restrict the tool calling mode and the allowed function names.
	BeforeToolSelection Event = "BeforeToolSelection"
)

// Events lists every event in gemini-cli's declaration order.
func Events() []Event {
	return []Event{BeforeTool, AfterTool, BeforeAgent, Notification, AfterAgent,
		SessionStart, SessionEnd, PreCompress, BeforeModel, AfterModel, BeforeToolSelection}
}

// Valid reports whether e is one of the known events.
func (e Event) Valid() bool { return slices.Contains(Events(), e) }

// matchKind says what a definition's matcher is compared with for an event.
type matchKind int

const (
	matchNone    matchKind = iota // the matcher is ignored
	matchRegexp                   // regular expression on the tool name
	matchLiteral                  // exact source, reason or trigger
)

func (e Event) matchKind() matchKind {
	switch e {
	case BeforeTool, AfterTool:
		return matchRegexp
	case SessionStart, SessionEnd, PreCompress:
		return matchLiteral
	default:
		return matchNone
	}
}

// CommandType is the only hook type settings can declare. gemini-cli also
// knows "runtime" hooks, but those are registered from code, never from
// settings.
const CommandType = "command"

// DefaultTimeoutMS is how long a hook may run when its settings give no
// timeout, as in gemini-cli.
const DefaultTimeoutMS = 60000

// Command is one hook: a shell command with its options, as written in
// settings.
type Command struct {
	// Type must be "command".
	Type string `json:"type"`
	// Command is run by the system shell.
	Command string `json:"command"`
	// Name identifies the hook in logs, failures and hooksConfig.disabled.
	Name string `json:"name,omitempty"`
	// Description is for people reading the settings.
	Description string `json:"description,omitempty"`
	// Timeout is in milliseconds; zero means DefaultTimeoutMS.
	Timeout int `json:"timeout,omitempty"`
	// Env is added to the hook's environment, overriding everything else.
	Env map[string]string `json:"env,omitempty"`
}

// ID is how the hook is named in hooksConfig.disabled, logs and failures:
// its name, or its command when it has none (gemini-cli's getHookName).
func (c Command) ID() string {
	if c.Name != "" {
		return c.Name
	}
	return c.Command
}

// dedupKey is gemini-cli's getHookKey: two entries run once when both their
// name and their command are equal.
func (c Command) dedupKey() string { return c.Name + ":" + c.Command }

// Definition groups hooks under one matcher.
type Definition struct {
	// Matcher filters when the hooks run; see Event for what it is compared
	// with. "" and "*" match everything.
	Matcher string `json:"matcher,omitempty"`
	// Sequential makes every hook matched for the event run one after the
	// other, each seeing the previous one's rewrites.
	Sequential bool `json:"sequential,omitempty"`
	// Hooks are the commands to run.
	Hooks []Command `json:"hooks"`
}

// HooksConfig holds the switches of the hooksConfig settings object.
type HooksConfig struct {
	// Enabled turns all hooks off when false; nil means true.
	Enabled *bool `json:"enabled,omitempty"`
	// Disabled lists hooks (by Command.ID) that must not run.
	Disabled []string `json:"disabled,omitempty"`
	// Notifications says whether a UI should show running hooks; nil means
	// true. The runner itself does not use it.
	Notifications *bool `json:"notifications,omitempty"`
}

// IsEnabled reports whether hooks are on (Enabled is nil or true).
func (h HooksConfig) IsEnabled() bool { return h.Enabled == nil || *h.Enabled }

// NotificationsEnabled reports whether hook activity should be shown (nil or
// true).
func (h HooksConfig) NotificationsEnabled() bool {
	return h.Notifications == nil || *h.Notifications
}

// Settings is the hooks part of a gemini-cli settings file.
type Settings struct {
	// Hooks maps each event to its definitions.
	Hooks map[Event][]Definition `json:"hooks"`
	// HooksConfig holds the global switches.
	HooksConfig HooksConfig `json:"hooksConfig"`
}

// isLegacyConfigKey reports whether key is a hooksConfig field that older
// gemini-cli settings put inside the hooks object itself
// (HOOKS_CONFIG_FIELDS); the registry skips them when reading events.
func isLegacyConfigKey(key string) bool {
	return key == "enabled" || key == "disabled" || key == "notifications"
}

// UnmarshalJSON reads settings, accepting the older layout in which
// enabled, disabled and notifications sit inside "hooks". Such values are
// used only where hooksConfig does not set the field itself.
func (s *Settings) UnmarshalJSON(data []byte) error {
	var raw struct {
		Hooks       map[string]json.RawMessage `json:"hooks"`
		HooksConfig HooksConfig                `json:"hooksConfig"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("hooks settings: %w", err)
	}
	var legacy HooksConfig
	hooks := make(map[Event][]Definition, len(raw.Hooks))
	for key, msg := range raw.Hooks {
		if isLegacyConfigKey(key) {
			if err := json.Unmarshal(fmt.Appendf(nil, `{%q:%s}`, key, msg), &legacy); err != nil {
				return fmt.Errorf("hooks settings: hooks.%s: %w", key, err)
			}
			continue
		}
		var defs []Definition
		if !bytes.Equal(bytes.TrimSpace(msg), []byte("null")) {
			if err := json.Unmarshal(msg, &defs); err != nil {
				return fmt.Errorf("hooks settings: hooks.%s: %w", key, err)
			}
		}
		hooks[Event(key)] = defs
	}
	s.Hooks = hooks
	s.HooksConfig = raw.HooksConfig
	if s.HooksConfig.Enabled == nil {
		s.HooksConfig.Enabled = legacy.Enabled
	}
	if s.HooksConfig.Disabled == nil {
		s.HooksConfig.Disabled = legacy.Disabled
	}
	if s.HooksConfig.Notifications == nil {
		s.HooksConfig.Notifications = legacy.Notifications
	}
	return nil
}

// Validate reports every problem in s: unknown event names, hooks with an
// unsupported type, empty commands and negative timeouts. Each error names
// the event, the definition and hook indexes, and the field. gemini-cli
// skips such entries with a warning; agentry refuses them so that a typo
// cannot silently switch a guard off.
func (s Settings) Validate() error {
	var errs []error
	// Sort the events so that the joined message is stable.
	events := make([]Event, 0, len(s.Hooks))
	for e := range s.Hooks {
		events = append(events, e)
	}
	slices.Sort(events)
	for _, e := range events {
		if !e.Valid() {
			errs = append(errs, fmt.Errorf("hooks.%s: %w", e, ErrUnknownEvent))
			continue
		}
		for i, def := range s.Hooks[e] {
			for j, c := range def.Hooks {
				at := fmt.Sprintf("hooks.%s[%d].hooks[%d]", e, i, j)
				switch {
				case c.Type == "":
					errs = append(errs, fmt.Errorf("%s.type: missing, want %q", at, CommandType))
				case c.Type != CommandType:
					errs = append(errs, fmt.Errorf("%s.type: unsupported type %q, want %q", at, c.Type, CommandType))
				}
				if c.Type == CommandType && c.Command == "" {
					errs = append(errs, fmt.Errorf("%s.command: empty", at))
				}
				if c.Timeout < 0 {
					errs = append(errs, fmt.Errorf("%s.timeout: negative (%d ms)", at, c.Timeout))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// ErrUnknownEvent is wrapped by errors about event names gemini-cli does not
// define.
var ErrUnknownEvent = errors.New("unknown hook event")
