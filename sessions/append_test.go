package sessions

import (
	"errors"
	"testing"
	"time"

	"google.golang.org/adk/v2/session"
)

// TestUpdateTime: a session's update time is its last append's time —
// the event's timestamp, or the clock's for an event without one — or its
// last rewrite's, the same in the live object, after a reload, in List
// and in Summaries, whichever way each append was stored. In SQLite an
// append of a timestamped event later than the session's update time
// leaves the session's row alone (one statement).
func TestUpdateTime(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		clock := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		s := b.open(t, WithClock(func() time.Time { return clock }))
		live := create(t, s, "s1", nil)
		create(t, s, "s2", nil) // no events: its creation time

		stored := func() int64 {
			t.Helper()
			var us int64
			if err := s.db.QueryRowContext(ctx, `SELECT update_time FROM sessions WHERE session_id = 's1'`).Scan(&us); err != nil {
				t.Fatal(err)
			}
			return us
		}
		check := func(step string, want time.Time) {
			t.Helper()
			if got := live.LastUpdateTime(); !got.Equal(want) {
				t.Errorf("%s: live updated %v, want %v", step, got, want)
			}
			// Stored in microseconds.
			want = time.UnixMicro(want.UnixMicro())
			r := b.open(t)
			if got := get(t, r, "s1").LastUpdateTime(); !got.Equal(want) {
				t.Errorf("%s: reloaded updated %v, want %v", step, got, want)
			}
			list, err := r.List(ctx, &session.ListRequest{AppName: testApp, UserID: testUser})
			if err != nil || len(list.Sessions) != 2 {
				t.Fatalf("%s: List: %v, %v", step, list, err)
			}
			if got := list.Sessions[0].LastUpdateTime(); !got.Equal(want) {
				t.Errorf("%s: listed updated %v, want %v", step, got, want)
			}
			if got := list.Sessions[1].LastUpdateTime(); !got.Equal(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)) {
				t.Errorf("%s: the session without events listed as updated %v", step, got)
			}
			sums, err := r.Summaries(ctx, testApp, testUser)
			if err != nil || len(sums) != 2 {
				t.Fatalf("%s: Summaries: %v, %v", step, sums, err)
			}
			if got := sums[0].Updated; !got.Equal(want) {
				t.Errorf("%s: summary updated %v, want %v", step, got, want)
			}
		}

		created := stored()
		t1 := clock.Add(time.Minute + 123456789)
		ev := textEvent("e1", "one")
		ev.Timestamp = t1
		appendEv(t, s, live, ev)
		check("later event", t1)
		if got := stored(); b.name == "sqlite" && got != created {
			t.Errorf("sqlite: an append of a later event wrote the session's row (%d, was %d)", got, created)
		} else if b.name == "postgres" && got != t1.UnixMicro() {
			t.Errorf("postgres: session row %d after an append at %d", got, t1.UnixMicro())
		}

		// Earlier than the session's update time: the row is written.
		ev = textEvent("e2", "two")
		ev.Timestamp = t1.Add(-time.Hour)
		appendEv(t, s, live, ev)
		check("earlier event", t1.Add(-time.Hour))

		// No timestamp: the clock's time.
		clock = clock.Add(time.Hour)
		appendEv(t, s, live, &session.Event{ID: "e3", Author: "user"})
		check("event without a timestamp", clock)

		// With a state change: in a transaction with the state.
		ev = textEvent("e4", "four")
		ev.Timestamp = clock.Add(time.Minute)
		ev.Actions.StateDelta = map[string]any{"k": "v"}
		appendEv(t, s, live, ev)
		check("event with state", clock.Add(time.Minute))

		// A rewrite at the clock's time, and one whose last event is
		// later than the clock.
		clock = clock.Add(time.Hour)
		if err := s.ReplaceEvents(ctx, testApp, testUser, "s1", []*session.Event{textEvent("r1", "summary")}, nil); err != nil {
			t.Fatal(err)
		}
		check("rewrite", clock)
		future := textEvent("r2", "later")
		future.Timestamp = clock.Add(time.Hour)
		if err := s.ReplaceEvents(ctx, testApp, testUser, "s1", []*session.Event{textEvent("r1", "summary"), future}, nil); err != nil {
			t.Fatal(err)
		}
		check("rewrite ending after the clock", future.Timestamp)

		ev = textEvent("e5", "five")
		ev.Timestamp = future.Timestamp.Add(time.Second)
		appendEv(t, s, live, ev)
		check("later event after a rewrite", ev.Timestamp)
	})
}

// TestAppendAfterOtherStore: an append of a loaded session that another
// Store deleted, or that another Store gave the same event, is refused
// with the error a fresh Store would give, and stores nothing.
func TestAppendAfterOtherStore(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s, other := b.open(t), b.open(t)
		live := create(t, s, "s1", nil)
		appendEv(t, s, live, textEvent("e1", "one"))

		dup := textEvent("e2", "two")
		dup.Timestamp = dup.Timestamp.Add(time.Second)
		appendEv(t, other, get(t, other, "s1"), dup)
		if err := s.AppendEvent(ctx, live, dup); !errors.Is(err, ErrExists) {
			t.Errorf("append of an event another Store stored: %v, want ErrExists", err)
		}
		if got := texts(get(t, b.open(t), "s1")); len(got) != 2 {
			t.Errorf("stored events %q, want two", got)
		}

		if err := other.Delete(ctx, &session.DeleteRequest{AppName: testApp, UserID: testUser, SessionID: "s1"}); err != nil {
			t.Fatal(err)
		}
		ev := textEvent("e3", "three")
		ev.Timestamp = dup.Timestamp.Add(time.Second)
		if err := s.AppendEvent(ctx, live, ev); !errors.Is(err, ErrNotFound) {
			t.Errorf("append to a session another Store deleted: %v, want ErrNotFound", err)
		}
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM events`).Scan(&n); err != nil || n != 0 {
			t.Errorf("%d events stored after the delete (%v)", n, err)
		}
	})
}
