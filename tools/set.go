package tools

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Config configures the built-in tools.
type Config struct {
	// Workspace is where the file tools may read and write and where shell
	// commands run. Required.
	Workspace *Workspace
	// ShellTimeout bounds one run_shell_command; 0 means no limit.
	ShellTimeout time.Duration
	// Env is the environment of shell commands; nil means the process's
	// less what envredact.Default withholds (secrets).
	// AGENTRY=1 and GEMINI_CLI=1 are always added, and PAGER=cat,
	// GIT_PAGER=cat and GIT_TERMINAL_PROMPT=0 so that nothing waits on a
	// terminal that is not there.
	Env []string
	// TempDir holds temporary files and the logs of background commands;
	// "" means os.TempDir().
	TempDir string
	// Exclude names tools not to offer (settings' tools.exclude).
	Exclude []string
}

// toolAliases maps former tool names to current ones, as gemini-cli's
// TOOL_LEGACY_ALIASES does, so that calls and settings using an old name
// still work.
var toolAliases = map[string]string{
	"search_file_content": "grep_search",
}

// Set is the built-in tools of one session. Close it to stop the
// background processes its shell tool started.
type Set struct {
	tools  []Tool
	byName map[string]Tool
	procs  *procTracker
}

// NewSet builds the built-in tools for cfg.
func NewSet(cfg Config) (*Set, error) {
	if cfg.Workspace == nil {
		return nil, errors.New("tools: Config.Workspace is required")
	}
	if cfg.ShellTimeout < 0 {
		return nil, fmt.Errorf("tools: negative shell timeout %v", cfg.ShellTimeout)
	}
	procs := newProcTracker()
	all := []Tool{
		newReadFileTool(cfg.Workspace),
		newWriteFileTool(cfg.Workspace),
		newEditTool(cfg.Workspace),
		newLsTool(cfg.Workspace),
		newGlobTool(cfg.Workspace),
		newGrepTool(cfg.Workspace),
		newReadManyTool(cfg.Workspace),
		newShellTool(cfg, procs),
	}
	known := map[string]bool{}
	for _, t := range all {
		known[t.Name()] = true
	}
	excluded := map[string]bool{}
	var unknown []string
	for _, name := range cfg.Exclude {
		if canonical, ok := toolAliases[name]; ok {
			name = canonical
		}
		if !known[name] {
			unknown = append(unknown, name)
			continue
		}
		excluded[name] = true
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("tools: unknown tools to exclude: %s (built-in tools are %s)",
			strings.Join(unknown, ", "), strings.Join(builtinNames(all), ", "))
	}
	s := &Set{byName: map[string]Tool{}, procs: procs}
	for _, t := range all {
		if excluded[t.Name()] {
			continue
		}
		s.tools = append(s.tools, t)
		s.byName[t.Name()] = t
	}
	return s, nil
}

func builtinNames(ts []Tool) []string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name()
	}
	return names
}

// Tools returns the tools offered to the model, in a stable order.
func (s *Set) Tools() []Tool {
	return append([]Tool(nil), s.tools...)
}

// Lookup returns the tool called name, accepting former names such as
// search_file_content for grep_search.
func (s *Set) Lookup(name string) (Tool, bool) {
	if canonical, ok := toolAliases[name]; ok {
		name = canonical
	}
	t, ok := s.byName[name]
	return t, ok
}

// Close kills the processes run_shell_command left running (background
// commands and the jobs foreground commands left behind) and waits for
// them. It is safe to call more than once; later calls do nothing.
func (s *Set) Close() error {
	return s.procs.close()
}
