package mcptools

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrUnknownServer reports a prompt asked of a server the Manager was not
// configured with.
var ErrUnknownServer = errors.New("mcptools: unknown mcp server")

// Prompt is a prompt a connected server offers (prompts/list), with the
// name of the server that offers it.
type Prompt struct {
	// Server is the configured name of the server.
	Server string
	*mcp.Prompt
}

// promptState is a server's listed prompts, kept until the server says
// they changed (notifications/prompts/list_changed) or its session is
// replaced (a restart).
type promptState struct {
	promptsMu   sync.Mutex
	prompts     []*mcp.Prompt
	promptsOf   *mcp.ClientSession // the session prompts were listed on
	promptsGen  atomic.Uint64      // bumped by list_changed
	promptsList uint64             // promptsGen when prompts were listed
	// promptsTried: a list connected, or tried to connect, the server.
	promptsTried bool
}

// Prompts lists the prompts of every configured server, connecting to the
// servers not connected yet (concurrently), in the order of the servers'
// names and then the order each server lists them (all pages). A server
// that does not offer prompts contributes none; one that cannot be
// reached or listed contributes an error naming it. A server's list is
// kept until it announces a change or its session is replaced, so calling
// Prompts again is cheap: Prompts connects a server at most once, and
// does not restart one that died (a tool call does; its last prompts
// stand meanwhile).
func (m *Manager) Prompts(ctx context.Context) ([]Prompt, []error) {
	lists := make([][]*mcp.Prompt, len(m.names))
	errs := make([]error, len(m.names))
	var wg sync.WaitGroup
	for i, name := range m.names {
		wg.Go(func() {
			lists[i], errs[i] = m.servers[name].listPrompts(ctx)
		})
	}
	wg.Wait()
	var out []Prompt
	var errOut []error
	for i, name := range m.names {
		if errs[i] != nil {
			errOut = append(errOut, errs[i])
			continue
		}
		for _, p := range lists[i] {
			out = append(out, Prompt{Server: name, Prompt: p})
		}
	}
	return out, errOut
}

// GetPrompt asks server for its prompt name with args (prompts/get) and
// returns the server's messages. The call is bounded by the server's
// timeout.
func (m *Manager) GetPrompt(ctx context.Context, server, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	srv := m.servers[server]
	if srv == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownServer, server)
	}
	sess, _, err := srv.session(ctx)
	if err != nil {
		return nil, err
	}
	ctx, cancel := srv.scope(ctx, timeout(srv.cfg))
	defer cancel()
	res, err := sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		if ctx.Err() == nil && !isWireError(err) {
			srv.markDead(sess)
		}
		if c := context.Cause(ctx); c != nil {
			err = fmt.Errorf("%w (%w)", err, c)
		}
		return nil, fmt.Errorf("mcp server %q: prompt %q: %w", server, name, err)
	}
	return res, nil
}

// listPrompts returns the server's prompts, listing them (every page)
// when none are kept for its current session or they changed since.
func (s *server) listPrompts(ctx context.Context) ([]*mcp.Prompt, error) {
	s.mu.Lock()
	cur, dead := s.sess, s.dead
	s.mu.Unlock()
	if s.lazy && !s.started.Load() {
		// A lazy server not started yet: its cached prompts, so that
		// listing them does not start it (getting one does).
		return s.cachedPrompts(), nil
	}
	s.promptsMu.Lock()
	kept, tried := s.prompts, s.promptsTried
	s.promptsTried = true
	s.promptsMu.Unlock()
	if tried && (cur == nil || dead) {
		// The server is down, or could not be reached: its last prompts
		// (if any) stand until a tool call connects it again. A list — a
		// keystroke's completion asks for one — connects a server once,
		// and is not worth a restart.
		return kept, nil
	}
	sess, _, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	if caps := sess.InitializeResult().Capabilities; caps == nil || caps.Prompts == nil {
		return nil, nil // like gemini-cli, only ask servers that offer prompts
	}
	s.promptsMu.Lock()
	defer s.promptsMu.Unlock()
	gen := s.promptsGen.Load()
	if s.promptsOf == sess && s.promptsList == gen {
		return s.prompts, nil
	}
	lctx, cancel := s.scope(ctx, setupTimeout(s.cfg))
	defer cancel()
	var found []*mcp.Prompt
	for p, err := range sess.Prompts(lctx, nil) {
		if err != nil {
			if lctx.Err() == nil && !isWireError(err) {
				s.markDead(sess)
			}
			if c := context.Cause(lctx); c != nil {
				err = fmt.Errorf("%w (%w)", err, c)
			}
			return nil, fmt.Errorf("mcp server %q: listing prompts: %w", s.name, err)
		}
		if p.Name == "" {
			continue
		}
		found = append(found, p)
	}
	s.prompts, s.promptsOf, s.promptsList = found, sess, gen
	return found, nil
}

// onPromptsChanged handles notifications/prompts/list_changed: the kept
// list is dropped and the prompts are listed again in the background, so
// that the next Prompts finds them.
func (s *server) onPromptsChanged(context.Context, *mcp.PromptListChangedRequest) {
	// Not under promptsMu: a list may be waiting for its answer on the
	// connection that delivers this notification.
	s.promptsGen.Add(1)
	s.log.Debug("mcp server's prompts changed; listing them again")
	// Not on the SDK's notification goroutine: the list is a request on
	// the same connection.
	go func() {
		if _, err := s.listPrompts(s.m.ctx); err != nil {
			s.log.Warn("listing the mcp server's changed prompts", "err", err)
		}
	}()
}
