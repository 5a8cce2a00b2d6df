package runtime

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/routing"
)

// recordingLimiter admits every call and records acquires and releases.
type recordingLimiter struct {
	mu  sync.Mutex
	log []string
	err error
}

func (l *recordingLimiter) Acquire(_ context.Context, model string) (func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return nil, l.err
	}
	l.log = append(l.log, "acquire "+model)
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.log = append(l.log, "release "+model)
	}, nil
}

// TestLimiterAdmitsEachAttempt: the Availability's limiter is asked before
// every attempt of a model call, retries included, and each slot is
// released when its attempt ends.
func TestLimiterAdmitsEachAttempt(t *testing.T) {
	srv := fakegemini.New(t)
	srv.EnqueueFor("gemini-2.5-flash", fakegemini.Unavailable(), fakegemini.Text("ok"))
	lim := &recordingLimiter{}
	s, _, _ := resilient{settings: settingsWith("gemini-2.5-flash", nil), avail: routing.NewAvailability(routing.WithLimiter(lim))}.start(t, srv)
	evs := run(t, s, "hi")
	if r := last(evs).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("reason %s, events %v", r, types(evs))
	}
	want := []string{"acquire gemini-2.5-flash", "release gemini-2.5-flash", "acquire gemini-2.5-flash", "release gemini-2.5-flash"}
	if diff := cmp.Diff(want, lim.log); diff != "" {
		t.Errorf("limiter (-want +got):\n%s", diff)
	}
}

// TestLimiterFailureEndsTheCall: a limiter that cannot admit the call
// fails it with an error naming the limit, and the model is not called.
func TestLimiterFailureEndsTheCall(t *testing.T) {
	srv := fakegemini.New(t)
	lim := &recordingLimiter{err: errors.New("database down")}
	s, _, _ := resilient{settings: settingsWith("gemini-2.5-flash", nil), avail: routing.NewAvailability(routing.WithLimiter(lim))}.start(t, srv)
	evs := run(t, s, "hi")
	end := last(evs).AgentEnd
	if end.Reason == EndCompleted {
		t.Fatalf("completed without admission")
	}
	var msgs []string
	for _, e := range find(evs, EventError) {
		msgs = append(msgs, e.Error.Message)
	}
	if !strings.Contains(strings.Join(msgs, "\n"), "fleet limit") {
		t.Errorf("errors %q do not name the limit", msgs)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model requests", n)
	}
}
