package sessions

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/v2/session"
)

func TestReplaceEvents(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		live := create(t, s, "s1", nil)
		for i := range 5 {
			appendEv(t, s, live, textEvent(fmt.Sprintf("e%d", i), fmt.Sprintf("text %d", i)))
		}
		before := live.Events()
		// A summary in front of the newest two events, as compression
		// writes it.
		repl := []*session.Event{textEvent("sum", "summary"), textEvent("ack", "got it"), textEvent("e3", "text 3"), textEvent("e4", "text 4")}
		delta := map[string]any{"agentry:compressed": "yes", "temp:x": 1}
		if err := s.ReplaceEvents(ctx, testApp, testUser, "s1", repl, delta); err != nil {
			t.Fatalf("ReplaceEvents: %v", err)
		}
		want := []string{"summary", "got it", "text 3", "text 4"}
		if d := cmp.Diff(want, texts(live)); d != "" {
			t.Errorf("live events (-want +got):\n%s", d)
		}
		if before.Len() != 5 || before.At(0).Content.Parts[0].Text != "text 0" {
			t.Errorf("a reader's old event list changed: len %d", before.Len())
		}
		if v, _ := live.State().Get("temp:x"); v != 1 {
			t.Errorf("live temp:x = %v, want 1", v)
		}
		// Appending after a replacement goes after the new history, and
		// the replaced ids are free again.
		appendEv(t, s, live, textEvent("e0", "after"))
		if err := s.AppendEvent(ctx, live, textEvent("ack", "dup")); !errors.Is(err, ErrExists) {
			t.Errorf("appending a kept id again = %v, want ErrExists", err)
		}

		r := b.open(t)
		got := get(t, r, "s1")
		if d := cmp.Diff(append(want, "after"), texts(got)); d != "" {
			t.Errorf("reopened events (-want +got):\n%s", d)
		}
		if v, _ := got.State().Get("agentry:compressed"); v != "yes" {
			t.Errorf("reopened state agentry:compressed = %v", v)
		}
		if _, err := got.State().Get("temp:x"); err == nil {
			t.Errorf("temp: state was stored")
		}

		// Bad input leaves the session as it was.
		for name, evs := range map[string][]*session.Event{
			"duplicate id": {textEvent("a", "1"), textEvent("a", "2")},
			"partial":      {func() *session.Event { e := textEvent("p", "x"); e.Partial = true; return e }()},
			"nil":          {nil},
		} {
			if err := r.ReplaceEvents(ctx, testApp, testUser, "s1", evs, nil); err == nil {
				t.Errorf("%s: ReplaceEvents succeeded", name)
			}
		}
		if d := cmp.Diff(append(want, "after"), texts(get(t, b.open(t), "s1"))); d != "" {
			t.Errorf("events after refused replacements (-want +got):\n%s", d)
		}
		if err := s.ReplaceEvents(ctx, testApp, testUser, "nope", repl, nil); !errors.Is(err, ErrNotFound) {
			t.Errorf("ReplaceEvents(unknown session) = %v, want ErrNotFound", err)
		}
		// An empty history is allowed: a rewind to the first message.
		if err := s.ReplaceEvents(ctx, testApp, testUser, "s1", nil, nil); err != nil {
			t.Fatalf("ReplaceEvents(empty): %v", err)
		}
		if n := get(t, b.open(t), "s1").Events().Len(); n != 0 {
			t.Errorf("reopened session has %d events after an empty replacement", n)
		}
	})
}
