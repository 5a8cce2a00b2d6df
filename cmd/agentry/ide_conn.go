package main

import (
	"context"
	"log/slog"
	"sync"

	"github.com/agentry-dev/agentry/ide"
	"github.com/agentry-dev/agentry/ide/idecontext"
	"github.com/agentry-dev/agentry/ide/idediff"
	"github.com/agentry-dev/agentry/ide/idewire"
)

// ideConn is the terminal session's connection to its IDE companion, the
// ideLink /ide drives: the editor's context for every prompt
// (idecontext.IDE) and the edits' diffs (idediff.Differ). It holds no
// client until /ide enable, or ide.enabled at start, connects one; each
// connection made later numbers its context updates past every earlier
// one's, so a context is never mistaken for another.
type ideConn struct {
	discover func() (ide.Endpoint, error)
	log      *slog.Logger

	mu       sync.Mutex
	enabling bool // an Enable runs
	c        *ide.Client
	epoch    uint64 // connections made; their updates are numbered epoch<<32 + n
	detail   string // why there is no client
}

var (
	_ idecontext.IDE = (*ideConn)(nil)
	_ idediff.Differ = (*ideConn)(nil)
	_ ideLink        = (*ideConn)(nil)
)

// newIDEConn is the connection of a session working in workspace, which
// discovery checks against the IDE's.
func newIDEConn(workspace string) *ideConn {
	return &ideConn{log: slog.Default(), discover: func() (ide.Endpoint, error) {
		ep, _, err := ide.Discover(ide.DiscoverOptions{Cwd: workspace})
		return ep, err
	}}
}

func (i *ideConn) client() (*ide.Client, uint64) {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.c, i.epoch
}

// Context implements idecontext.IDE.
func (i *ideConn) Context() (idewire.Context, uint64) {
	c, epoch := i.client()
	if c == nil {
		return idewire.Context{}, 0
	}
	ctx, n := c.Context()
	if n == 0 {
		return ctx, 0
	}
	return ctx, epoch<<32 + n
}

// CanDiff implements idediff.Differ.
func (i *ideConn) CanDiff() bool {
	c, _ := i.client()
	return c != nil && c.CanDiff()
}

// OpenDiff implements idediff.Differ.
func (i *ideConn) OpenDiff(ctx context.Context, path, newContent string) (idediff.Answer, error) {
	c, _ := i.client()
	if c == nil {
		return idediff.Answer{}, ide.ErrNotConnected
	}
	o, err := c.OpenDiff(ctx, path, newContent)
	return idediff.Answer(o), err
}

// CloseDiff implements idediff.Differ.
func (i *ideConn) CloseDiff(ctx context.Context, path string) (*string, error) {
	c, _ := i.client()
	if c == nil {
		return nil, ide.ErrNotConnected
	}
	return c.CloseDiff(ctx, path)
}

// Enable implements ideLink: discovery, then the connection, which then
// follows a restarted companion by itself.
func (i *ideConn) Enable(ctx context.Context) error {
	if c, _ := i.client(); c != nil {
		return nil
	}
	ep, err := i.discover()
	if err != nil {
		i.setDetail(err.Error())
		return err
	}
	c, err := ide.Connect(ctx, ep, ide.WithRediscover(i.discover), ide.WithLogger(i.log))
	if err != nil {
		i.setDetail(err.Error())
		return err
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.c != nil { // another Enable won
		return c.Close()
	}
	i.c, i.detail = c, ""
	i.epoch++
	return nil
}

// Retry connects in the background unless a connection is there or
// being made: a server whose companion started after it finds it with
// its next session.
func (i *ideConn) Retry(ctx context.Context) {
	i.mu.Lock()
	if i.c != nil || i.enabling {
		i.mu.Unlock()
		return
	}
	i.enabling = true
	i.mu.Unlock()
	go func() {
		defer func() {
			i.mu.Lock()
			i.enabling = false
			i.mu.Unlock()
		}()
		if err := i.Enable(ctx); err != nil {
			i.log.Debug("ide: no connection", "err", err)
		}
	}()
}

func (i *ideConn) setDetail(d string) {
	i.mu.Lock()
	i.detail = d
	i.mu.Unlock()
}

// Disable implements ideLink: the connection closes, with the diffs it
// has open in the IDE.
func (i *ideConn) Disable(context.Context) error {
	i.mu.Lock()
	c := i.c
	i.c, i.detail = nil, ideTextDisabled
	i.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.Close()
}

// State implements ideLink.
func (i *ideConn) State() ideLinkState {
	i.mu.Lock()
	c, detail := i.c, i.detail
	i.mu.Unlock()
	if c == nil {
		if detail == "" {
			detail = ideTextInitial
		}
		return ideLinkState{Status: ideDisconnected, Detail: detail}
	}
	st := c.Status()
	out := ideLinkState{Detail: st.Details, IDE: st.IDE}
	switch st.State {
	case ide.Connected:
		out.Status = ideConnected
		if ws := idecontext.Normalize(firstOf(c.Context())).WorkspaceState; ws != nil {
			out.OpenFiles = ws.OpenFiles
		}
	case ide.Connecting:
		out.Status = ideConnecting
	default:
		out.Status = ideDisconnected
	}
	return out
}

// Close ends the connection, if any.
func (i *ideConn) Close() error { return i.Disable(context.Background()) }

func firstOf(ctx idewire.Context, _ uint64) idewire.Context { return ctx }
