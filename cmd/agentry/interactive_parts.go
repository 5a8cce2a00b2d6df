package main

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/agentry-dev/agentry/complete"
	"github.com/agentry-dev/agentry/prompthist"
	"github.com/agentry-dev/agentry/tools"
	"github.com/agentry-dev/agentry/tui"
)

// completionTimeout bounds one Tab's path search; the search itself reads
// a bounded number of entries, this only keeps a slow file system from
// holding the key.
const completionTimeout = 500 * time.Millisecond

// completer answers the terminal's Tab: slash commands and their
// subcommands, and @path references in the workspace.
type completer struct {
	ws       *tools.Workspace // nil: no path completion
	commands func() []complete.Command
}

// candidates returns the replacements of input's last token (the terminal
// replaces what follows the input's last blank).
func (c completer) candidates(input string) []string {
	start := strings.LastIndexAny(input, " \t\n") + 1
	var full []string
	if strings.HasPrefix(input, "/") && !strings.ContainsAny(input, "\n") {
		for _, s := range complete.Commands(c.commands(), input) {
			full = append(full, s.Value)
		}
	}
	if tok, ok := complete.AtToken(input, len(input)); ok && c.ws != nil {
		ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
		defer cancel()
		sugs, _ := complete.Paths(ctx, c.ws, tok.Path, complete.Options{})
		for _, s := range sugs {
			next, _ := tok.Replace(input, s)
			full = append(full, next)
		}
	}
	out := make([]string, 0, len(full))
	for _, f := range full {
		if strings.HasPrefix(f, input[:start]) {
			out = append(out, f[start:])
		}
	}
	return out
}

// history is the terminal's prompt history: the workspace's file,
// recorded under the session the prompt went to.
type history struct {
	h       *prompthist.History
	mu      sync.Mutex
	session string
}

var _ tui.History = (*history)(nil)

func (h *history) setSession(id string) {
	h.mu.Lock()
	h.session = id
	h.mu.Unlock()
}

// Add records a submitted prompt.
func (h *history) Add(prompt string) error {
	h.mu.Lock()
	id := h.session
	h.mu.Unlock()
	return h.h.Add(id, prompt)
}

// Entries lists the prompts newest first.
func (h *history) Entries() []string { return h.h.Prompts() }
