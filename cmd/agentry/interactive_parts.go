package main

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/agentry-dev/agentry/protocol"
	"github.com/agentry-dev/agentry/runtime"

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

// maxPendingTurns bounds the clients' turns waiting for the terminal to
// show them.
const maxPendingTurns = 256

// turnsTo is the server's turn callback feeding the terminal.
func turnsTo(turns chan tui.Turn) func(protocol.Turn) {
	return func(tr protocol.Turn) {
		select {
		case turns <- tui.Turn{StreamID: tr.StreamID, Origin: tr.Origin, Text: tr.Text}:
		default: // the turn runs; the terminal is too far behind to show it
		}
	}
}

// servedSession is the terminal's session when it is served: a prompt
// typed in the terminal becomes a task of the server (queued behind the
// clients' turns), so that every client sees it.
type servedSession struct {
	*runtime.Session
	srv *protocol.Server
}

func (s servedSession) Send(ctx context.Context, p runtime.Send) (string, error) {
	if p.Message == nil {
		return s.Session.Send(ctx, p)
	}
	return s.srv.SubmitSend(ctx, s.ID(), p.Message)
}
