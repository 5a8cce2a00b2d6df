package protocol_test

import (
	"context"
	"iter"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/protocol"
)

// memLog is an event log in memory.
type memLog struct {
	mu     sync.Mutex
	events map[a2a.TaskID][]a2a.Event
}

func (l *memLog) Append(contextID string, task a2a.TaskID, ev a2a.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if info, ok := ev.(a2a.TaskInfoProvider); !ok || info.TaskInfo().TaskID != task || info.TaskInfo().ContextID != contextID {
		panic("an event appended under another task or context")
	}
	l.events[task] = append(l.events[task], ev)
}

func (l *memLog) Follow(_ context.Context, task a2a.TaskID) (iter.Seq2[a2a.Event, error], bool, error) {
	l.mu.Lock()
	evs := append([]a2a.Event(nil), l.events[task]...)
	l.mu.Unlock()
	if len(evs) == 0 {
		return nil, false, nil
	}
	return func(yield func(a2a.Event, error) bool) {
		for _, ev := range evs {
			if !yield(ev, nil) {
				return
			}
		}
	}, true, nil
}

func (l *memLog) of(task a2a.TaskID) []a2a.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.events[task]
}

// TestEventLog: with Config.EventLog every event a client streams is
// appended, in order; a subscribe to a task not running here is replayed
// from the log on every binding.
func TestEventLog(t *testing.T) {
	log := &memLog{events: map[a2a.TaskID][]a2a.Event{}}
	h := newHarness(t, []string{textTurn("one ", "two ", "three")}, func(c *protocol.Config, _ *config.Settings) { c.EventLog = log })
	got := collect(t, h.client("jsonrpc"), userMessage("Count.", ""))
	task := got[0].(*a2a.Task)
	if describe(log.of(task.ID)) != describe(got) || len(got) < 3 {
		t.Fatalf("logged %s\nstreamed %s", describe(log.of(task.ID)), describe(got))
	}
	// Another replica's task, known to the log only.
	other := a2a.TaskID("elsewhere")
	info := a2a.TaskInfo{TaskID: other, ContextID: "ctx-elsewhere"}
	log.Append(info.ContextID, other, &a2a.Task{ID: other, ContextID: info.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}})
	log.Append(info.ContextID, other, &a2a.TaskStatusUpdateEvent{TaskID: other, ContextID: info.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateWorking}})
	log.Append(info.ContextID, other, &a2a.TaskArtifactUpdateEvent{TaskID: other, ContextID: info.ContextID, Artifact: &a2a.Artifact{ID: "a", Parts: a2a.ContentParts{a2a.NewTextPart("hi")}}})
	log.Append(info.ContextID, other, &a2a.TaskStatusUpdateEvent{TaskID: other, ContextID: info.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}})
	for _, binding := range []string{"jsonrpc", "rest", "grpc", "v0.3"} {
		var evs []a2a.Event
		for ev, err := range h.plainClient(binding).SubscribeToTask(t.Context(), &a2a.SubscribeToTaskRequest{ID: other}) {
			if err != nil {
				t.Fatalf("%s: %v", binding, err)
			}
			evs = append(evs, ev)
		}
		if describe(evs) != describe(log.of(other)) {
			t.Errorf("%s: subscribed %s, logged %s", binding, describe(evs), describe(log.of(other)))
		}
	}
	// The finished task here is replayed from the log too.
	var again []a2a.Event
	for ev, err := range h.client("jsonrpc").SubscribeToTask(t.Context(), &a2a.SubscribeToTaskRequest{ID: task.ID}) {
		if err != nil {
			t.Fatal(err)
		}
		again = append(again, ev)
	}
	if describe(again) != describe(got) {
		t.Errorf("a late subscriber got %s, want %s", describe(again), describe(got))
	}
}
