package runtime

import (
	"fmt"
	"iter"
	"sync"
	"testing"

	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool/toolconfirmation"
	"google.golang.org/genai"
)

// Events of a test history. inv names the invocation.
func prompt(inv, text string) *session.Event {
	return &session.Event{ID: inv + "-p", InvocationID: inv, Author: "user",
		LLMResponse: model.LLMResponse{Content: genai.NewContentFromText(text, genai.RoleUser)}}
}

func callEv(inv, id string) *session.Event {
	return &session.Event{ID: inv + "-c" + id, InvocationID: inv, Author: "agentry",
		LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: id, Name: "t"}}}}}}
}

func respEv(inv, id string) *session.Event {
	return &session.Event{ID: inv + "-r" + id, InvocationID: inv, Author: "agentry",
		LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: id, Name: "t"}}}}}}
}

func answer(inv string) *session.Event {
	return &session.Event{ID: inv + "-a", InvocationID: inv, Author: "agentry",
		LLMResponse: model.LLMResponse{Content: genai.NewContentFromText("done", genai.RoleModel)}}
}

// TestWindowStart: where the window ADK sees starts, for each kind of
// history: at the latest prompt that starts an invocation with every
// earlier call answered, and nowhere (the whole history) once an event ADK
// carries across invocations was seen.
func TestWindowStart(t *testing.T) {
	with := func(ev *session.Event, f func(*session.Event)) *session.Event { f(ev); return ev }
	tests := []struct {
		name   string
		events []*session.Event
		want   int
	}{
		{"empty", nil, 0},
		{"one prompt", []*session.Event{prompt("i1", "a")}, 0},
		{"two closed turns", []*session.Event{prompt("i1", "a"), callEv("i1", "1"), respEv("i1", "1"), answer("i1"), prompt("i2", "b"), answer("i2")}, 4},
		{"the new prompt itself", []*session.Event{prompt("i1", "a"), answer("i1"), prompt("i2", "b")}, 2},
		{"a call left open", []*session.Event{prompt("i1", "a"), callEv("i1", "1"), prompt("i2", "b"), answer("i2")}, 0},
		{"answered in a later turn", []*session.Event{prompt("i1", "a"), callEv("i1", "1"), prompt("i2", "b"), respEv("i2", "1"), answer("i2"), prompt("i3", "c")}, 5},
		{"a call without id", []*session.Event{prompt("i1", "a"), callEv("i1", ""), respEv("i1", ""), prompt("i2", "b")}, 0},
		{"a user message inside an invocation", []*session.Event{prompt("i1", "a"), answer("i1"), prompt("i2", "b"), prompt("i2", "more")}, 2},
		{"a model event is no boundary", []*session.Event{prompt("i1", "a"), answer("i1"), answer("i2")}, 0},
		{"the same call id twice", []*session.Event{prompt("i1", "a"), callEv("i1", "1"), callEv("i1", "1"), respEv("i1", "1"), prompt("i2", "b"), respEv("i2", "1"), prompt("i3", "c")}, 6},
		{"long-running ids", []*session.Event{prompt("i1", "a"), with(answer("i1"), func(e *session.Event) { e.LongRunningToolIDs = []string{"x"} }), prompt("i2", "b"), answer("i2"), prompt("i3", "c")}, 0},
		{"an isolation scope", []*session.Event{prompt("i1", "a"), with(answer("i1"), func(e *session.Event) { e.IsolationScope = "s" }), prompt("i2", "b")}, 0},
		{"requested confirmations", []*session.Event{prompt("i1", "a"), with(answer("i1"), func(e *session.Event) {
			e.Actions.RequestedToolConfirmations = map[string]toolconfirmation.ToolConfirmation{"c": {}}
		}), prompt("i2", "b")}, 0},
		{"a transfer", []*session.Event{prompt("i1", "a"), with(answer("i1"), func(e *session.Event) { e.Actions.TransferToAgent = "other" }), prompt("i2", "b")}, 0},
		{"a nil event", []*session.Event{prompt("i1", "a"), nil, prompt("i2", "b")}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &windowMark{open: map[string]int{}}
			if got := m.update(eventsOf(tt.events)); got != tt.want {
				t.Errorf("start %d, want %d", got, tt.want)
			}
			// Event by event, as a session grows, gives the same start.
			m = &windowMark{open: map[string]int{}}
			var got int
			for i := range tt.events {
				got = m.update(eventsOf(tt.events[:i+1]))
			}
			if len(tt.events) > 0 && got != tt.want {
				t.Errorf("grown one by one: start %d, want %d", got, tt.want)
			}
		})
	}
}

// TestWindowRewritten: a history that differs from what the mark saw (an
// event replaced, the history cut) is looked at again from its start.
func TestWindowRewritten(t *testing.T) {
	evs := []*session.Event{prompt("i1", "a"), answer("i1"), prompt("i2", "b"), answer("i2"), prompt("i3", "c")}
	m := &windowMark{open: map[string]int{}}
	if got := m.update(eventsOf(evs)); got != 4 {
		t.Fatalf("start %d, want 4", got)
	}
	// A compression: the first turns become one summary turn, and a call
	// is left open in it.
	rewritten := []*session.Event{prompt("s", "summary"), callEv("s", "9"), evs[4]}
	if got := m.update(eventsOf(rewritten)); got != 0 {
		t.Errorf("after the rewrite: start %d, want 0", got)
	}
	// Cut back (a rewind) to fewer events than seen.
	if got := m.update(eventsOf(evs[:3])); got != 2 {
		t.Errorf("after the cut: start %d, want 2", got)
	}
}

// TestWindowSessionFallsBackWhole: once the event the window starts at is
// no longer at its place, the session shows all its events.
func TestWindowSessionFallsBackWhole(t *testing.T) {
	ctx := t.Context()
	svc := session.InMemoryService()
	created, err := svc.Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []*session.Event{prompt("i1", "a"), answer("i1"), prompt("i2", "b"), answer("i2")} {
		if err := svc.AppendEvent(ctx, created.Session, ev); err != nil {
			t.Fatal(err)
		}
	}
	v := newADKView(svc)
	resp, err := v.Get(ctx, &session.GetRequest{AppName: "a", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	w, ok := resp.Session.(*windowSession)
	if !ok {
		t.Fatalf("session %T, want a window", resp.Session)
	}
	if got := ids(w.Events()); fmt.Sprint(got) != "[i2-p i2-a]" {
		t.Errorf("window %v", got)
	}
	// Appending through the view reaches the store and the window.
	if err := v.AppendEvent(ctx, w, prompt("i3", "c")); err != nil {
		t.Fatal(err)
	}
	if got := ids(w.Events()); fmt.Sprint(got) != "[i2-p i2-a i3-p]" {
		t.Errorf("window after an append %v", got)
	}
	stored, err := svc.Get(ctx, &session.GetRequest{AppName: "a", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if n := stored.Session.Events().Len(); n != 5 {
		t.Errorf("%d events stored, want 5", n)
	}
	w.anchor = answer("elsewhere")
	if n := w.Events().Len(); n != 5 {
		t.Errorf("a moved anchor shows %d events, want all 5", n)
	}
	// A filtered Get is passed on as it is.
	resp, err = v.Get(ctx, &session.GetRequest{AppName: "a", UserID: "u", SessionID: "s", NumRecentEvents: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := resp.Session.(*windowSession); ok || resp.Session.Events().Len() != 1 {
		t.Errorf("a filtered Get gave %T with %d events", resp.Session, resp.Session.Events().Len())
	}
}

// TestADKViewConcurrentSessions: the view's marks are shared by its
// sessions' loads and appends (run with -race).
func TestADKViewConcurrentSessions(t *testing.T) {
	ctx := t.Context()
	v := newADKView(session.InMemoryService())
	var wg sync.WaitGroup
	for s := range 4 {
		wg.Go(func() {
			id := fmt.Sprint("s", s)
			created, err := v.Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u", SessionID: id})
			if err != nil {
				t.Error(err)
				return
			}
			sess := created.Session
			for i := range 20 {
				inv := fmt.Sprint("i", i)
				for _, ev := range []*session.Event{prompt(inv, "p"), callEv(inv, inv), respEv(inv, inv), answer(inv)} {
					if err := v.AppendEvent(ctx, sess, ev); err != nil {
						t.Error(err)
						return
					}
				}
				resp, err := v.Get(ctx, &session.GetRequest{AppName: "a", UserID: "u", SessionID: id})
				if err != nil {
					t.Error(err)
					return
				}
				sess = resp.Session
				if got := sess.Events().Len(); i > 0 && got != 4 {
					t.Errorf("session %s turn %d: the window holds %d events, want the last turn's 4", id, i, got)
				}
			}
		})
	}
	wg.Wait()
}

func eventsOf(evs []*session.Event) session.Events { return viewEvents(evs) }

type viewEvents []*session.Event

func (e viewEvents) Len() int                { return len(e) }
func (e viewEvents) At(i int) *session.Event { return e[i] }
func (e viewEvents) All() iter.Seq[*session.Event] {
	return func(yield func(*session.Event) bool) {
		for _, ev := range e {
			if !yield(ev) {
				return
			}
		}
	}
}

func ids(evs session.Events) []string {
	var out []string
	for ev := range evs.All() {
		out = append(out, ev.ID)
	}
	return out
}
