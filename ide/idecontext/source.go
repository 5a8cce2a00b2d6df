package idecontext

import (
	"context"
	"sync"

	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/ide/idewire"
)

// IDE is where the source reads the editor's context: the latest
// ide/contextUpdate as received (not normalised) and a counter that grows
// with every update, (zero, 0) while there is none — before the first
// update, or after the connection is gone (gemini-cli then clears its
// store and sends nothing).
type IDE interface {
	Context() (idewire.Context, uint64)
}

// Source is the editor context of a set of sessions, as gemini-cli's
// client sends it: before each prompt (runtime.PromptContext), the full
// context when the session has not had one yet or its history was
// rewritten since (a rewind, a compression, a resumed session), then only
// what changed since the last prompt, and nothing when nothing did. The
// parts go into the history with the prompt, so that the model keeps
// seeing them and the next delta is relative to what it has seen.
//
// Each session has its own state (what it was last sent), so one Source
// may serve concurrent sessions. A session whose history ends with a
// model turn holding a function call (one whose response is still to
// come) gets nothing and keeps its state: the Gemini API wants the
// response right after the call.
type Source struct {
	ide IDE

	mu       sync.Mutex
	counter  uint64          // the update norm was made from
	norm     idewire.Context // the latest update, normalised
	sessions map[string]*sessionState
}

// sessionState is what one session was last sent: gemini-cli's
// lastSentIdeContext and forceFullIdeContext.
type sessionState struct {
	// sent is true once a context was current at a prompt (gemini-cli's
	// lastSentIdeContext is defined); last and counter are that context.
	sent    bool
	last    idewire.Context
	counter uint64
	// full makes the next prompt get the full context.
	full bool
}

// New returns a source reading the editor's context from ide.
func New(ide IDE) *Source {
	return &Source{ide: ide, sessions: map[string]*sessionState{}}
}

// Forget drops the state of session sessionID (a closed session); its
// next prompt, if any, gets the full context.
func (s *Source) Forget(sessionID string) {
	s.mu.Lock()
	delete(s.sessions, sessionID)
	s.mu.Unlock()
}

// HistoryRewritten tells the source that session sessionID's history was
// rewritten — rewound, compressed — so that what the model saw of the
// earlier contexts may be gone: its next prompt gets the full context, as
// gemini-cli's setHistory and compression force it.
func (s *Source) HistoryRewritten(sessionID string) {
	s.mu.Lock()
	if st := s.sessions[sessionID]; st != nil {
		st.full = true
	}
	s.mu.Unlock()
}

// PromptContext returns the parts to put ahead of the next prompt of
// session sessionID, whose stored history is history (the prompt not yet
// in it): none, or one text part in gemini-cli's full or delta form. The
// caller must put the parts into the history with the prompt (first, so
// that the model sees the context before the prompt, as gemini-cli's
// separate user turn merges into the prompt's). A session the source has
// not seen gets the full context, as gemini-cli's startChat (a new
// session, a resumed one, /clear) forces it.
func (s *Source) PromptContext(_ context.Context, sessionID string, history session.Events) []*genai.Part {
	raw, n := s.ide.Context()
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.sessions[sessionID]
	if st == nil {
		st = &sessionState{full: true}
		s.sessions[sessionID] = st
	}
	if pendingCall(history) {
		// gemini-cli sends nothing and remembers nothing: the next prompt
		// carries it.
		return nil
	}
	full := st.full || !st.sent
	st.full = false
	if n == 0 {
		st.sent, st.last, st.counter = false, idewire.Context{}, 0
		return nil
	}
	if n != s.counter {
		s.counter, s.norm = n, Normalize(raw)
	}
	var text string
	switch {
	case full:
		text = Full(s.norm)
	case n != st.counter:
		text = Delta(st.last, s.norm)
	}
	st.sent, st.last, st.counter = true, s.norm, n
	if text == "" {
		return nil
	}
	return []*genai.Part{{Text: text}}
}

// pendingCall reports whether the history's last turn is the model's
// with a function call.
func pendingCall(history session.Events) bool {
	for i := lengthOf(history) - 1; i >= 0; i-- {
		c := history.At(i).Content
		if c == nil {
			continue
		}
		if c.Role != genai.RoleModel {
			return false
		}
		for _, p := range c.Parts {
			if p != nil && p.FunctionCall != nil {
				return true
			}
		}
		return false
	}
	return false
}

func lengthOf(h session.Events) int {
	if h == nil {
		return 0
	}
	return h.Len()
}
