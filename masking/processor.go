package masking

import (
	"context"
	"fmt"
	"iter"
	"reflect"
	"strings"
	"sync"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"
)

// Persist makes masking last: it applies masked responses to the live
// session sessionID (and its storage and transcript), matching them by
// call id, so the next turn, a resumed session and the transcript all see
// the masked view.
type Persist func(ctx context.Context, sessionID string, masked []Masked) error

// History reads a stored session's history: the contents of the events of
// session sessionID of app and user, in event order, with their call ids
// as stored. The masking processor reads it to learn the call ids that
// ADK strips from request contents; the session store's owner adapts its
// store to it.
type History func(ctx context.Context, app, user, sessionID string) (iter.Seq[*genai.Content], error)

// Processor is the masking request processor, second in the chain after
// the content processor. On every model request it masks the history,
// rewrites the request's contents and hands the masked responses to its
// Persist hook.
//
// Only the masking itself is on the request's path. The spill files and
// the Persist hook run in the background while the request goes to the
// model — a long session's first pass writes hundreds of files, which on
// a real disk takes longer than the masking — and Settle waits for them:
// the chain settles before the model's answer is acted on (its first
// response, its error, any tool call) and at the end of a run, and
// ProcessRequest settles the previous pass before the next. Until a pass
// has settled its placeholders exist only in the request that carries
// them, so a crash leaves the session unmasked and the next pass masks
// it again, reusing the files already written.
//
// The history is what gemini-cli masks: the request's contents without
// the request being sent — the trailing user content (the new prompt or
// the function responses just produced), which gemini-cli keeps outside
// its chat history until the call. The request's contents are ADK's deep
// copies with ADK's own "adk-…" call ids stripped, and a model callback
// cannot reach the session, so the processor reads the session's history
// (ids intact) through its History to find each response's call id.
type Processor struct {
	m       *Masker
	history History
	persist Persist

	mu sync.Mutex
	// pending holds the unsettled pass of each session.
	pending map[string]*job
}

// job is a pass's spill and persistence, running in the background.
type job struct {
	done chan struct{}
	err  error // set before done is closed
}

// NewProcessor returns the masking processor of m. history reads the
// stored sessions whose requests it processes; without it only responses
// whose call ids survive in the request (ids the model chose) can be
// masked. persist may be nil.
func NewProcessor(m *Masker, history History, persist Persist) *Processor {
	return &Processor{m: m, history: history, persist: persist, pending: map[string]*job{}}
}

// Name implements processors.RequestProcessor.
func (p *Processor) Name() string { return "masking" }

// ProcessRequest implements processors.RequestProcessor. A failure to
// load the session fails the model call, as a failed mask fails
// gemini-cli's turn; so does a failure to write a spill file or persist,
// reported when the pass settles.
func (p *Processor) ProcessRequest(ctx agent.Context, req *model.LLMRequest) error {
	if err := p.Settle(ctx, ctx.SessionID()); err != nil {
		return err
	}
	history := req.Contents
	if n := len(history); n > 0 && history[n-1] != nil && history[n-1].Role == genai.RoleUser {
		history = history[:n-1]
	}
	// Planning needs no call ids; most turns end here.
	cands := p.m.plan(history)
	if len(cands) == 0 {
		return nil
	}
	var events []sessionResponse
	if p.history != nil {
		contents, err := p.history(ctx, ctx.AppName(), ctx.UserID(), ctx.SessionID())
		if err != nil {
			return fmt.Errorf("load session %s: %w", ctx.SessionID(), err)
		}
		events = sessionResponses(contents)
	}
	idOf := matchCallIDs(req.Contents, events)
	pass := p.m.mask(ctx, history, cands, idOf)
	if len(pass.masked) == 0 {
		return nil
	}
	req.Contents = apply(req.Contents, pass.masked, idOf)
	p.start(context.WithoutCancel(ctx), ctx.SessionID(), pass)
	return nil
}

// start writes pass's spill files and then persists its replacements, in
// the background. The files come first: a persisted placeholder must
// never name a missing file. ctx is not cancelled with the run: a pass
// that has begun finishes, so that the files and the session agree.
func (p *Processor) start(ctx context.Context, sessionID string, pass *pass) {
	j := &job{done: make(chan struct{})}
	p.mu.Lock()
	p.pending[sessionID] = j
	p.mu.Unlock()
	go func() {
		defer close(j.done)
		if err := pass.write(); err != nil {
			j.err = err
			return
		}
		if p.persist != nil {
			if err := p.persist(ctx, sessionID, pass.masked); err != nil {
				j.err = fmt.Errorf("persist masked tool outputs: %w", err)
			}
		}
	}()
}

// Settle waits until the last masking pass of session sessionID has
// written its spill files and persisted, and returns its error, once; nil
// when no pass is pending. A cancelled ctx stops the wait, not the pass.
// Settle implements processors.Settler.
func (p *Processor) Settle(ctx context.Context, sessionID string) error {
	p.mu.Lock()
	j := p.pending[sessionID]
	p.mu.Unlock()
	if j == nil {
		return nil
	}
	select {
	case <-j.done:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	p.mu.Lock()
	if p.pending[sessionID] == j {
		delete(p.pending, sessionID)
	}
	p.mu.Unlock()
	return j.err
}

// sessionResponse is a function response of the session, in event order.
type sessionResponse struct {
	id       string
	name     string
	response map[string]any
}

func sessionResponses(contents iter.Seq[*genai.Content]) []sessionResponse {
	var out []sessionResponse
	for c := range contents {
		if c == nil {
			continue
		}
		for _, p := range c.Parts {
			if p != nil && p.FunctionResponse != nil {
				fr := p.FunctionResponse
				out = append(out, sessionResponse{fr.ID, fr.Name, fr.Response})
			}
		}
	}
	return out
}

// adkIDPrefix starts the call ids ADK gives calls the model left without
// one; ADK strips them from request contents.
const adkIDPrefix = "adk-"

// matchCallIDs returns the call id of each function response of contents:
// its own id, or, when ADK stripped it, the id of the session response it
// was copied from. ADK builds contents from the session's events in order,
// leaving some out but never reordering a response before an earlier one,
// so a forward scan pairs each stripped response with the next session
// response of the same tool whose content is equal. Equality is cheap:
// ADK's copy shares the string data, and Go compares shared strings by
// pointer first.
func matchCallIDs(contents []*genai.Content, session []sessionResponse) idFunc {
	ids := map[*genai.FunctionResponse]string{}
	next := 0
	for _, c := range contents {
		if c == nil {
			continue
		}
		for _, p := range c.Parts {
			if p == nil || p.FunctionResponse == nil {
				continue
			}
			fr := p.FunctionResponse
			if fr.ID != "" {
				ids[fr] = fr.ID
				for k := next; k < len(session); k++ {
					if session[k].id == fr.ID {
						next = k + 1
						break
					}
				}
				continue
			}
			for k := next; k < len(session); k++ {
				s := session[k]
				if strings.HasPrefix(s.id, adkIDPrefix) && s.name == fr.Name && reflect.DeepEqual(s.response, fr.Response) {
					ids[fr] = s.id
					next = k + 1
					break
				}
			}
		}
	}
	return func(fr *genai.FunctionResponse) string { return ids[fr] }
}
