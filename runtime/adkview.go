package runtime

import (
	"context"
	"iter"
	"sync"

	"google.golang.org/adk/v2/session"
)

// adkView is the session service a session's ADK runner is given: svc,
// except that a session ADK loads shows only its recent events, from the
// first event of the latest invocation before which the history is
// closed (every function call answered, nothing ADK carries from one
// invocation to the next), usually the previous prompt.
//
// ADK's runner and flow scan the session's events on every invocation and
// model call — the long-running-call and confirmation scans, the current
// turn's building, the task-delegation and isolation-scope scans — and
// each scan is a pass over, and a copy of, the whole history, although
// what they look for can only be in an invocation that is still open. The
// agent runs with llmagent.IncludeContentsNone, and the conversation
// processor reads the whole history through the store, not through ADK's
// session, so the model's request does not depend on the view.
//
// The view never hides what ADK carries across invocations: an event with
// long-running tool ids, an isolation scope, requested tool confirmations,
// a transfer to another agent or a request for input stops the window
// from moving past it for good (the whole history is then shown, as
// without the view). A history rewritten under a loaded session (a
// compression or a rewind) also shows whole: the window is kept only
// while the event it starts at is still at its place.
type adkView struct {
	session.Service
	mu    sync.Mutex
	marks map[string]*windowMark
}

func newADKView(svc session.Service) *adkView {
	return &adkView{Service: svc, marks: map[string]*windowMark{}}
}

// windowMark is what the view knows of one session's history: the events
// it has looked at, in order, and where the window can start.
type windowMark struct {
	seen []*session.Event
	// open counts the function calls among seen that have no response
	// among seen, by call id.
	open map[string]int
	// unnamed counts the calls without an id, which no response can be
	// matched to: they keep the history open.
	unnamed int
	// carried is set once an event that ADK carries from one invocation
	// to the next has been seen.
	carried bool
	// start is the index in seen where the window starts; 0 shows the
	// whole history.
	start int
}

// Get implements session.Service: the session with its recent events.
// A request for a filtered copy (NumRecentEvents, After) is passed on as
// it is.
func (v *adkView) Get(ctx context.Context, req *session.GetRequest) (*session.GetResponse, error) {
	resp, err := v.Service.Get(ctx, req)
	if err != nil || resp == nil || resp.Session == nil || req.NumRecentEvents > 0 || !req.After.IsZero() {
		return resp, err
	}
	events := resp.Session.Events()
	v.mu.Lock()
	m := v.marks[req.SessionID]
	if m == nil {
		m = &windowMark{open: map[string]int{}}
		v.marks[req.SessionID] = m
	}
	start := m.update(events)
	v.mu.Unlock()
	if start == 0 {
		return resp, nil
	}
	return &session.GetResponse{Session: &windowSession{Session: resp.Session, start: start, anchor: events.At(start)}}, nil
}

// AppendEvent implements session.Service: the event is appended to the
// session the view was made of.
func (v *adkView) AppendEvent(ctx context.Context, s session.Session, ev *session.Event) error {
	if w, ok := s.(*windowSession); ok {
		s = w.Session
	}
	return v.Service.AppendEvent(ctx, s, ev)
}

// Delete implements session.Service, forgetting what the view knew of the
// session.
func (v *adkView) Delete(ctx context.Context, req *session.DeleteRequest) error {
	v.mu.Lock()
	delete(v.marks, req.SessionID)
	v.mu.Unlock()
	return v.Service.Delete(ctx, req)
}

// update brings m up to date with events and returns where the window
// starts. The events m has seen are checked first, one pointer comparison
// each: a history that differs from them (rewritten since) is looked at
// again from its start.
func (m *windowMark) update(events session.Events) int {
	n := events.Len()
	if n < len(m.seen) {
		m.reset()
	} else {
		for i, ev := range m.seen {
			if events.At(i) != ev {
				m.reset()
				break
			}
		}
	}
	for i := len(m.seen); i < n; i++ {
		ev := events.At(i)
		if ev == nil {
			m.carried = true
			m.seen = append(m.seen, ev)
			continue
		}
		if !m.carried && i > 0 && m.closed() && startsInvocation(m.seen[i-1], ev) {
			m.start = i
		}
		m.add(ev)
		m.seen = append(m.seen, ev)
	}
	if m.carried {
		return 0
	}
	return m.start
}

func (m *windowMark) reset() {
	m.seen = m.seen[:0]
	clear(m.open)
	m.unnamed, m.carried, m.start = 0, false, 0
}

// closed reports whether every call seen so far has its response.
func (m *windowMark) closed() bool { return len(m.open) == 0 && m.unnamed == 0 }

// startsInvocation reports whether ev is a user's message that starts an
// invocation other than prev's.
func startsInvocation(prev, ev *session.Event) bool {
	return ev.Author == "user" && (prev == nil || prev.InvocationID != ev.InvocationID)
}

// add counts ev's calls and responses, and marks what ADK carries across
// invocations.
func (m *windowMark) add(ev *session.Event) {
	if len(ev.LongRunningToolIDs) > 0 || ev.IsolationScope != "" ||
		len(ev.Actions.RequestedToolConfirmations) > 0 || ev.Actions.TransferToAgent != "" ||
		ev.RequestedInput != nil {
		m.carried = true
	}
	c := ev.LLMResponse.Content
	if c == nil {
		return
	}
	for _, p := range c.Parts {
		switch {
		case p == nil:
		case p.FunctionCall != nil:
			if p.FunctionCall.ID == "" {
				m.unnamed++
			} else {
				m.open[p.FunctionCall.ID]++
			}
		case p.FunctionResponse != nil:
			id := p.FunctionResponse.ID
			if k := m.open[id]; k > 1 {
				m.open[id] = k - 1
			} else if k == 1 {
				delete(m.open, id)
			}
		}
	}
}

// windowSession is a session whose events start at start, as long as the
// event at start is anchor; otherwise (the history was rewritten) all of
// them.
type windowSession struct {
	session.Session
	start  int
	anchor *session.Event
}

// Events implements session.Session.
func (w *windowSession) Events() session.Events {
	evs := w.Session.Events()
	if w.start < evs.Len() && evs.At(w.start) == w.anchor {
		return windowEvents{evs: evs, start: w.start}
	}
	return evs
}

// windowEvents are evs from start on.
type windowEvents struct {
	evs   session.Events
	start int
}

func (w windowEvents) Len() int { return w.evs.Len() - w.start }

func (w windowEvents) At(i int) *session.Event {
	if i < 0 || i >= w.Len() {
		return nil
	}
	return w.evs.At(w.start + i)
}

func (w windowEvents) All() iter.Seq[*session.Event] {
	return func(yield func(*session.Event) bool) {
		for i, n := w.start, w.evs.Len(); i < n; i++ {
			if !yield(w.evs.At(i)) {
				return
			}
		}
	}
}
