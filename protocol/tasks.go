package protocol

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/runtime"
)

// errClientGone is the abort cause when a streaming client disconnects
// and the server is set to abort.
var errClientGone = errors.New("client disconnected")

// handler is agentry's a2asrv.RequestHandler. It runs tasks itself —
// sending a message, streaming, cancelling, resubscribing, reading a
// running task — and leaves stored tasks, listings and push-config
// management to a2a-go's handler over the same stores.
//
// a2a-go's own task pipeline copies the whole task (history included)
// with encoding/gob for every event, twice: about 300 µs per event for a
// short task on this project's 2-core reference machine, growing with the
// task — a 200-event answer costs 200 ms of copying. The development-tool
// extension sends an update per text delta and per tool state, so agentry
// keeps each running task in memory, appends its events without copying,
// and writes the task store only when the task's state changes.
type handler struct {
	a2asrv.RequestHandler
	s *Server
}

// liveTask is a task whose run is in this process: running, or parked
// waiting for a confirmation.
type liveTask struct {
	id a2a.TaskID
	c  *convo
	q  *queue
	tr *translator
	// pl, set for a task whose first request did not activate the
	// development-tool extension, shapes its events as plain A2A. The
	// request that starts a task decides its shape for every follower.
	pl *plainTranslator
	// stream is set by attach, under c.mu.
	stream string

	mu sync.Mutex
	// task is the task's current state. Its history and status messages
	// are never changed once added, so a snapshot shares them.
	task    *a2a.Task
	version taskstore.TaskVersion
	// answer is the text of the answer artifact, the one artifact a task
	// has (plain tasks only).
	answer strings.Builder
	// delta marks the history messages that are answer text deltas, in
	// step with task.History (see mergeDeltas); statusDelta says whether
	// the current status message is one.
	delta       []bool
	statusDelta bool
	// log holds the current execution's events. Each watcher (a
	// follower, a confirmation waiting for the execution to end) is
	// signalled when the log grows or the execution ends: a buffered
	// channel of one, so a signal is never lost and publishing allocates
	// nothing.
	log      []a2a.Event
	watchers []chan struct{}
	// running: an execution is draining the run's events.
	running bool
	// waiting is the call the task is parked on, once input-required
	// went out.
	waiting *approval
	// accepted is the answer a confirmation brought, checked by the
	// interceptor and handed to the run when the next execution starts.
	accepted *answer
	// answered remembers decided calls, to tell a repeated confirmation
	// from one for a call the task never had.
	answered map[string]string
	// disconnected: the run was aborted because the client left.
	disconnected bool
	// cancelled: a cancel came before the run started.
	cancelled bool
	// draining: a goroutine is translating the queue (see drain).
	draining atomic.Bool
	// attached is closed when the run's stream is known (stream set) or
	// the task failed to start.
	attached chan struct{}
	// hub, once set, receives every event published (see setHub).
	hub *hub
	// origin is the WebSocket client whose message started the task
	// (nil: another binding, or the driver).
	origin *wsClient
	// queued: the task waits for the context's active task to end
	// instead of being refused (WebSocket clients and the driver).
	queued bool
	// fromDriver: the driver's own message (Submit), not a client's;
	// driverSend, when the driver gave it, is what the session runs.
	fromDriver bool
	driverSend *runtime.SendMessage
	// acceptedBy says who gave the accepted answer; answeredBy says it of
	// each decided call. "the terminal", `client "name"`, "a client".
	acceptedBy string
	answeredBy map[string]string
	// unqueue is closed when the task is cancelled while it waits for its
	// turn.
	unqueue     chan struct{}
	unqueueOnce sync.Once
	// answerOrder lists the decided calls in the order they were
	// answered.
	answerOrder []string
	// liveSeen: a live stream (SendLiveMessage) has been on the task, so
	// the idle policy applies to its questions; lives counts the live
	// streams following it now.
	liveSeen bool
	lives    int
	// idled, when set, is how long the task waited for input before the
	// idle policy cancelled it.
	idled time.Duration
	// elog, when set, gets every event published (Config.EventLog).
	elog EventLog
}

// setHub makes h receive the task's events, those already published
// first. It is a no-op once set.
func (t *liveTask) setHub(h *hub) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.hub != nil {
		return
	}
	t.hub = h
	h.publish(t.id, 0, t.log)
}

// by is who gave the answer to call, for errors about later answers.
func (t *liveTask) by(call string) string {
	if b := t.answeredBy[call]; b != "" {
		return " by " + b
	}
	return ""
}

// stateChange is a state update in the task's shape.
func (t *liveTask) stateChange(state a2a.TaskState, text, errText string) *a2a.TaskStatusUpdateEvent {
	if t.pl != nil {
		if text == "" {
			text = errText
		}
		return t.pl.status(state, text)
	}
	return t.tr.stateChange(state, text, errText)
}

// lastError is the message of the run's last error event.
func (t *liveTask) lastError() string {
	if t.pl != nil {
		return t.pl.lastError
	}
	return t.tr.lastError
}

func (t *liveTask) waitingFor() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.waiting == nil {
		return ""
	}
	return t.waiting.req.CallID
}

// snapshot returns a copy of the task safe to hand out, with at most
// historyLength messages of history (nil: all).
func (t *liveTask) snapshot(historyLength *int) *a2a.Task {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.snapshotLocked(historyLength)
}

func (t *liveTask) snapshotLocked(historyLength *int) *a2a.Task {
	c := copyTask(t.task)
	c.History = mergeDeltas(c.History, t.delta)
	if historyLength != nil && *historyLength >= 0 && len(c.History) > *historyLength {
		c.History = c.History[len(c.History)-*historyLength:]
	}
	return c
}

func copyTask(task *a2a.Task) *a2a.Task {
	c := *task
	c.History = slices.Clone(task.History)
	c.Artifacts = slices.Clone(task.Artifacts)
	c.Metadata = maps.Clone(task.Metadata)
	return &c
}

// apply applies events to the task. It returns the state changes among
// them, which the store and push notifications receive, and then a copy of
// the task to store.
func (t *liveTask) apply(evs ...a2a.Event) (changes []a2a.Event, stored *a2a.Task) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ev := range evs {
		if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			t.addArtifact(a)
			continue
		}
		u, ok := ev.(*a2a.TaskStatusUpdateEvent)
		if !ok {
			continue
		}
		prev := t.task.Status.State
		if t.task.Status.Message != nil {
			t.addHistory(t.task.Status.Message, t.statusDelta)
		}
		t.task.Status = u.Status
		t.statusDelta = false
		if dev, ok := devtool.EventFrom(u.Metadata); ok {
			t.statusDelta = dev.Kind == devtool.KindTextContent
			if t.task.Metadata == nil {
				t.task.Metadata = map[string]any{}
			}
			t.task.Metadata[devtool.URI] = u.Metadata[devtool.URI]
			if dev.Kind == devtool.KindStateChange || u.Status.State != prev {
				changes = append(changes, ev)
			}
		} else if u.Status.State != prev {
			changes = append(changes, ev)
		}
	}
	if len(changes) > 0 {
		stored = copyTask(t.task)
		stored.History = mergeDeltas(stored.History, t.delta)
	}
	return changes, stored
}

// addArtifact applies an artifact update to the task; t.mu is held. The
// answer's chunks become one text part, built without copying what came
// before, and the artifact is replaced, not changed, so snapshots already
// handed out stay as they were.
func (t *liveTask) addArtifact(u *a2a.TaskArtifactUpdateEvent) {
	i := slices.IndexFunc(t.task.Artifacts, func(a *a2a.Artifact) bool { return a.ID == u.Artifact.ID })
	if i < 0 || !u.Append {
		t.answer.Reset()
	}
	t.answer.WriteString(partsText(u.Artifact.Parts))
	a := *u.Artifact
	if i >= 0 && u.Append {
		a = *t.task.Artifacts[i]
	}
	a.Parts = a2a.ContentParts{a2a.NewTextPart(t.answer.String())}
	if i < 0 {
		t.task.Artifacts = append(t.task.Artifacts, &a)
	} else {
		t.task.Artifacts[i] = &a
	}
}

// partsText is the text of an answer artifact's parts.
func partsText(parts a2a.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text())
	}
	return b.String()
}

// addHistory appends a message to the task's history; t.mu is held.
func (t *liveTask) addHistory(m *a2a.Message, delta bool) {
	if len(t.delta) < len(t.task.History) {
		t.delta = append(t.delta, make([]bool, len(t.task.History)-len(t.delta))...)
	}
	t.task.History = append(t.task.History, m)
	t.delta = append(t.delta, delta)
}

// mergeDeltas merges each run of consecutive text deltas in a copy of a
// task's history into one message, the first one's id with the run's
// text: a task read back (stored, or a live task's snapshot) holds an
// answer as one message rather than one per streamed delta (a
// 200-delta answer was 200 messages to encode and write when the task
// ended). Only the stream carries every delta. h is modified in place.
func mergeDeltas(h []*a2a.Message, delta []bool) []*a2a.Message {
	if len(delta) != len(h) {
		return h // out of step: store the history as it is
	}
	out := h[:0]
	for i := 0; i < len(h); {
		j := i + 1
		if delta[i] && plainText(h[i]) {
			for j < len(h) && delta[j] && plainText(h[j]) {
				j++
			}
		}
		if j-i == 1 {
			out = append(out, h[i])
			i = j
			continue
		}
		var text strings.Builder
		for _, m := range h[i:j] {
			for _, p := range m.Parts {
				text.WriteString(string(p.Content.(a2a.Text)))
			}
		}
		merged := *h[i]
		merged.Parts = a2a.ContentParts{a2a.NewTextPart(text.String())}
		out = append(out, &merged)
		i = j
	}
	return out
}

// plainText reports whether m is nothing but text parts.
func plainText(m *a2a.Message) bool {
	if m == nil || len(m.Parts) == 0 || len(m.Metadata) > 0 || len(m.Extensions) > 0 || len(m.ReferenceTasks) > 0 {
		return false
	}
	for _, p := range m.Parts {
		if _, ok := p.Content.(a2a.Text); !ok || p.Filename != "" || p.MediaType != "" || len(p.Metadata) > 0 {
			return false
		}
	}
	return true
}

// publish appends events to the log and wakes its followers.
func (t *liveTask) publish(evs ...a2a.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	idx := len(t.log)
	t.log = append(t.log, evs...)
	if t.elog != nil {
		for _, ev := range evs {
			t.elog.Append(t.task.ContextID, t.id, ev)
		}
	}
	if t.hub != nil {
		t.hub.publish(t.id, idx, evs)
	}
	t.signal()
}

// settleParking waits, with t.mu held, for the execution that parked the
// run on a confirmation to end: it publishes input-required before it
// ends, and a quick client may answer or cancel in between. Deciding
// then would see a run both parked and running.
func (t *liveTask) settleParking() {
	if !t.running || t.waiting == nil {
		return
	}
	w := t.watch()
	defer t.unwatchLocked(w)
	// The execution ends right after its last event; the bound only
	// keeps a broken run from holding the caller.
	deadline := time.After(5 * time.Second)
	for t.running && t.waiting != nil {
		t.mu.Unlock()
		select {
		case <-w:
			t.mu.Lock()
		case <-deadline:
			t.mu.Lock()
			return
		}
	}
}

// signal wakes every watcher; t.mu is held.
func (t *liveTask) signal() {
	for _, w := range t.watchers {
		select {
		case w <- struct{}{}:
		default: // already signalled
		}
	}
}

// watch registers a watcher; t.mu is held. unwatch removes it.
func (t *liveTask) watch() chan struct{} {
	w := make(chan struct{}, 1)
	t.watchers = append(t.watchers, w)
	return w
}

func (t *liveTask) unwatch(w chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.unwatchLocked(w)
}

func (t *liveTask) unwatchLocked(w chan struct{}) {
	if i := slices.Index(t.watchers, w); i >= 0 {
		t.watchers = slices.Delete(t.watchers, i, i+1)
	}
}

// terminal reports whether ev ends its task.
func terminal(ev a2a.Event) bool {
	u, ok := ev.(*a2a.TaskStatusUpdateEvent)
	return ok && u.Status.State.Terminal()
}

// ends reports whether ev ends an execution: the task's end, or a pause
// for the user.
func ends(ev a2a.Event) bool {
	switch e := ev.(type) {
	case *a2a.TaskStatusUpdateEvent:
		return e.Status.State.Terminal() || e.Status.State == a2a.TaskStateInputRequired
	case *a2a.Task:
		return e.Status.State.Terminal()
	}
	return false
}

// SendStreamingMessage starts a task or resumes a parked one and streams
// its execution's events.
func (h handler) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		t, from, err := h.s.send(ctx, req)
		if err != nil {
			yield(nil, err)
			return
		}
		h.s.follow(ctx, t, from, yield)
	}
}

// SendMessage starts or resumes a task and returns it when its execution
// ends (at once with returnImmediately).
func (h handler) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	t, from, err := h.s.send(ctx, req)
	if err != nil {
		return nil, err
	}
	var hl *int
	if req.Config != nil {
		hl = req.Config.HistoryLength
		if req.Config.ReturnImmediately {
			return t.snapshot(hl), nil
		}
	}
	h.s.follow(ctx, t, from, func(a2a.Event, error) bool { return true })
	return t.snapshot(hl), nil
}

// GetTask serves a live task from memory, others from the store.
func (h handler) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	if t := h.s.getLive(req.ID); t != nil {
		return t.snapshot(req.HistoryLength), nil
	}
	return h.RequestHandler.GetTask(ctx, req)
}

// SubscribeToTask follows a running task from now: its current state,
// then its events to the end of the execution. A task not running here
// that the event log has (Config.EventLog: another replica runs it, or
// ran it) is replayed from the log from its first event, then followed
// there to the end of the execution.
func (h handler) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		t := h.s.getLive(req.ID)
		if t != nil {
			t.mu.Lock()
			running, from := t.running, len(t.log)
			t.mu.Unlock()
			if running {
				if !yield(t.snapshot(nil), nil) {
					return
				}
				h.s.follow(ctx, t, from, yield)
				return
			}
		}
		if l := h.s.cfg.EventLog; l != nil {
			events, ok, err := l.Follow(ctx, req.ID)
			if err != nil {
				yield(nil, err)
				return
			}
			if ok {
				for ev, err := range events {
					if !yield(ev, err) || err != nil {
						return
					}
				}
				return
			}
		}
		for ev, err := range h.RequestHandler.SubscribeToTask(ctx, req) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// CancelTask aborts a task's run (a parked call is declined) and returns
// it canceled.
func (h handler) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	s := h.s
	t := s.getLive(req.ID)
	if t == nil {
		return s.cancelStored(ctx, req.ID)
	}
	from, _ := s.stopRun(t, nil)
	wait, stop := context.WithTimeout(ctx, 10*time.Second)
	defer stop()
	s.follow(wait, t, from, func(a2a.Event, error) bool { return true })
	return t.snapshot(nil), nil
}

// stopRun aborts a live task's run, declining the call it is parked on,
// and returns the log position its end will follow. only, when given, is
// asked first with t.mu held (once the parking has settled): the run is
// left alone, and stopped false, unless it says yes.
func (s *Server) stopRun(t *liveTask, only func() bool) (from int, stopped bool) {
	t.mu.Lock()
	t.settleParking()
	if only != nil && !only() {
		from = len(t.log)
		t.mu.Unlock()
		return from, false
	}
	ap, c := t.waiting, t.c
	from = len(t.log)
	t.waiting, t.accepted = nil, nil
	parked := !t.running && ap != nil
	if parked {
		t.running = true
	}
	if c == nil {
		// Still starting, or waiting for its turn: start sees the flag.
		t.cancelled = true
		t.unqueueOnce.Do(func() { close(t.unqueue) })
	}
	t.mu.Unlock()
	if c != nil {
		c.sess.Abort(runtime.ErrAborted)
	}
	if ap != nil {
		ap.answer <- answer{outcome: runtime.Cancel}
	}
	if parked {
		// The declined call's run drains to its end as a new execution.
		s.slots.acquire(true)
	}
	return from, true
}

// cancelStored cancels a task this process is not running: one left
// behind by a restart is marked canceled.
func (s *Server) cancelStored(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	st, err := s.cfg.TaskStore.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	task := st.Task
	switch {
	case task.Status.State == a2a.TaskStateCanceled:
		return task, nil
	case task.Status.State.Terminal():
		return nil, a2a.NewError(a2a.ErrTaskNotCancelable, fmt.Sprintf("task %s is already %s: only a task that has not ended can be canceled", id, stateName(task.Status.State)))
	}
	var ev *a2a.TaskStatusUpdateEvent
	if _, ext := task.Metadata[devtool.URI]; ext {
		ev = newTranslator(task.TaskInfo(), s.cfg.Model, s.now).stateChange(a2a.TaskStateCanceled, "Task cancelled.", "")
	} else {
		// No development-tool update was ever stored: a plain task.
		ev = newPlainTranslator(task.TaskInfo(), s.now).status(a2a.TaskStateCanceled, "Task cancelled.")
	}
	if task.Status.Message != nil {
		task.History = append(task.History, task.Status.Message)
	}
	task.Status = ev.Status
	if _, err := s.cfg.TaskStore.Update(ctx, &taskstore.UpdateRequest{Task: task, Event: ev, PrevVersion: st.Version}); err != nil {
		return nil, err
	}
	return task, nil
}

// send admits a message: a new task starts an execution on its context;
// a confirmation resumes the parked one. It returns the task and the log
// position the caller's events start at.
func (s *Server) send(ctx context.Context, req *a2a.SendMessageRequest) (*liveTask, int, error) {
	m := req.Message
	if m == nil {
		return nil, 0, a2a.NewError(a2a.ErrInvalidParams, "message is required")
	}
	if m.TaskID != "" {
		return s.resume(ctx, req)
	}
	if !s.slots.acquire(false) {
		return nil, 0, a2a.NewError(a2a.ErrServerError, fmt.Sprintf(
			"agentry is running its limit of %d tasks at once; retry when one ends (serve --max-tasks raises the limit)", s.cfg.MaxTasks))
	}
	contextID := m.ContextID
	if contextID == "" {
		contextID = a2a.NewContextID()
	}
	msg := *m
	msg.ContextID = contextID
	if origin := originOf(ctx); origin != "" {
		// Who sent it, for the clients sharing the session (docs/ws.md).
		msg.Metadata = maps.Clone(msg.Metadata)
		if msg.Metadata == nil {
			msg.Metadata = map[string]any{}
		}
		msg.Metadata[OriginKey] = origin
	}
	id := a2a.NewTaskID()
	msg.TaskID = id
	task := &a2a.Task{ID: id, ContextID: contextID, History: []*a2a.Message{&msg},
		Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}, Metadata: maps.Clone(req.Metadata)}
	ts := s.now()
	task.Status.Timestamp = &ts
	if req.Config != nil && req.Config.PushConfig != nil {
		if _, err := s.cfg.PushStore.Save(ctx, id, req.Config.PushConfig); err != nil {
			s.slots.release()
			return nil, 0, fmt.Errorf("save the push notification config: %w", err)
		}
	}
	version, err := s.cfg.TaskStore.Create(ctx, copyTask(task))
	if err != nil {
		s.slots.release()
		return nil, 0, fmt.Errorf("store the task: %w", err)
	}
	t := &liveTask{
		id: id, q: newQueue(), tr: newTranslator(task.TaskInfo(), s.cfg.Model, s.now),
		task: task, version: version, running: true,
		answered: map[string]string{}, answeredBy: map[string]string{}, attached: make(chan struct{}),
		unqueue: make(chan struct{}), elog: s.cfg.EventLog,
	}
	if !extensionActive(ctx) {
		t.pl = newPlainTranslator(task.TaskInfo(), s.now)
	}
	if o := wsFrom(ctx); o != nil {
		t.origin, t.queued = o.client, true
		if o.stream {
			// Before the task's first event exists: the client gets every
			// one of them as a response.
			o.client.own(t.id, 0, o)
		}
	}
	if driverFrom(ctx) {
		t.fromDriver, t.queued = true, true
		t.driverSend, _ = ctx.Value(driverSendKey{}).(*runtime.SendMessage)
	}
	if lc := liveFrom(ctx); lc != nil {
		// The task's events, its creation first, are the stream's.
		lc.bind(t, 0, nil)
	}
	s.addLive(t)
	first := copyTask(task)
	t.publish(first)
	s.pushChanges(t, []a2a.Event{first})
	go s.start(t, &msg, req)
	return t, 0, nil
}

// start runs a new task: its context's session, the message, and the
// events to the end or the first confirmation.
func (s *Server) start(t *liveTask, msg *a2a.Message, req *a2a.SendMessageRequest) {
	ctx := s.ctx
	fail := func(err error) {
		defer close(t.attached)
		s.log.Warn("a2a: task failed to start", "task", t.id, "err", err)
		s.releaseContext(t)
		state := a2a.TaskStateFailed
		if errors.Is(err, errCancelledQueued) {
			state = a2a.TaskStateCanceled
		}
		s.record(t, t.stateChange(state, err.Error(), err.Error()))
		s.finish(t)
		s.endExecution(t)
		s.slots.release()
		s.deliverUnhubbed(t)
	}
	if !t.queued {
		s.record(t, t.stateChange(a2a.TaskStateWorking, "", ""))
	}
	settings, _, _ := devtool.SettingsFrom(msg.Metadata)
	var c *convo
	for {
		var err error
		if c, err = s.convo(ctx, t.task.ContextID, settings.WorkspacePath); err != nil {
			fail(err)
			return
		}
		if t.queued {
			if t.origin != nil {
				// A connection that named no context follows the one its
				// first message went to.
				t.origin.follow(c)
			}
			if h := c.currentHub(); h != nil {
				t.setHub(h) // clients see the turn queued
			}
			err = c.claimQueued(t)
			if err == nil {
				s.record(t, t.stateChange(a2a.TaskStateWorking, "", ""))
			}
		} else {
			err = c.claim(t)
		}
		if errors.Is(err, errEvicted) {
			// Closed for idleness as this task came: the next lookup
			// reopens the session.
			s.forget(c)
			continue
		}
		if err != nil {
			fail(err)
			return
		}
		break
	}
	t.tr.model = c.sess.Model()
	if h := c.currentHub(); h != nil {
		t.setHub(h)
	}
	t.mu.Lock()
	t.c = c
	cancelled := t.cancelled
	t.mu.Unlock()
	if cancelled {
		c.release(t)
		fail(errors.New("the task was cancelled before it started"))
		return
	}
	content, err := contentOf(msg)
	var stream string
	if err == nil {
		send := &runtime.SendMessage{Content: content}
		if t.driverSend != nil {
			send = t.driverSend
		}
		stream, err = c.sess.Send(ctx, runtime.Send{Message: send})
		if err == nil {
			c.attach(stream, t)
		}
	}
	if err != nil {
		fail(err)
		return
	}
	close(t.attached)
	if !t.fromDriver {
		c.announce(stream, t, msg)
	}
	s.drain(t)
}

// resume hands a confirmation's answer to the parked run and starts an
// execution to stream the rest of it.
func (s *Server) resume(ctx context.Context, req *a2a.SendMessageRequest) (*liveTask, int, error) {
	m := req.Message
	t := s.getLive(m.TaskID)
	if t == nil {
		// Finished, unknown or left by a restart: the interceptor said
		// which; the store's error stands.
		st, err := s.cfg.TaskStore.Get(ctx, m.TaskID)
		if err != nil {
			return nil, 0, err
		}
		return nil, 0, finishedTask(m.TaskID, st.Task)
	}
	t.mu.Lock()
	t.settleParking()
	ap, ans := t.waiting, t.accepted
	if ap == nil || ans == nil || t.running {
		t.mu.Unlock()
		return nil, 0, a2a.NewError(a2a.ErrInvalidRequest, fmt.Sprintf("task %s is not waiting for this confirmation", t.id))
	}
	t.waiting, t.accepted = nil, nil
	t.answered[ap.req.CallID] = string(ans.outcome)
	t.answeredBy[ap.req.CallID] = t.acceptedBy
	t.answerOrder = append(t.answerOrder, ap.req.CallID)
	t.running = true
	from := len(t.log)
	if o := wsFrom(ctx); o != nil && o.stream {
		o.client.own(t.id, from, o)
	}
	msg := *m
	t.addHistory(&msg, false)
	if lc := liveFrom(ctx); lc != nil {
		// A stream whose first message answers the task: the task as it
		// is, then its events from the answer on.
		lc.bind(t, from, t.snapshotLocked(lc.historyLength()))
	}
	t.mu.Unlock()
	s.slots.acquire(true)
	if ans.outcome == runtime.Cancel {
		t.tr.denied[ap.req.CallID] = true
	}
	if t.pl != nil {
		// A plain client sees the task working again before any answer
		// text (an artifact update carries no state). The run is parked:
		// nothing else translates for it until it has the answer.
		s.record(t, t.pl.status(a2a.TaskStateWorking, ""))
	}
	ap.answer <- *ans
	return t, from, nil
}

// drain translates the run's queued items into events and records them,
// on the goroutine that queued them (the session's): no hand-off to
// another goroutine stands between the agent and the client. An
// execution ends when the run ends or parks on a confirmation.
func (s *Server) drain(t *liveTask) {
	for {
		if !t.draining.CompareAndSwap(false, true) {
			return // the goroutine draining will see the new items
		}
		items := t.q.take()
		if len(items) > 0 {
			out, done := s.translate(t, items)
			end := done && len(out) > 0 && terminal(out[len(out)-1])
			if end {
				// The context takes its next task as soon as anyone can
				// hear that this one ended.
				s.releaseContext(t)
			}
			s.record(t, out...)
			if done {
				if end {
					// After the store has the end: a reader never finds
					// the task neither live nor finished.
					s.finish(t)
				}
				s.endExecution(t)
				s.slots.release()
			}
		}
		t.draining.Store(false)
		if t.q.empty() {
			return
		}
	}
}

// record publishes events and writes state changes to the store and the
// push webhooks.
func (s *Server) record(t *liveTask, evs ...a2a.Event) {
	if len(evs) == 0 {
		return
	}
	changes, task := t.apply(evs...)
	// A state that ends an execution is stored before anyone hears of it:
	// a client told "completed" finds the task completed after a restart,
	// and one told input-required finds it failed for the reason a restart
	// gives a parked run. Working again after a confirmation goes out
	// first: a restart fails a task it finds working whatever else it
	// stored, and the store's copy of the task (a2a-go's in-memory store
	// encodes it with gob) would otherwise stand between an answer and
	// everyone hearing of it.
	final := len(changes) > 0 && ends(changes[len(changes)-1])
	if !final {
		t.publish(evs...)
	}
	if len(changes) > 0 {
		t.mu.Lock()
		prev := t.version
		t.mu.Unlock()
		v, err := s.cfg.TaskStore.Update(s.ctx, &taskstore.UpdateRequest{Task: task, Event: changes[len(changes)-1], PrevVersion: prev})
		if err != nil {
			s.log.Warn("a2a: cannot store the task", "task", t.id, "err", err)
		} else {
			t.mu.Lock()
			t.version = v
			t.mu.Unlock()
		}
	}
	if final {
		t.publish(evs...)
	}
	if len(changes) > 0 {
		s.pushChanges(t, changes)
	}
}

// pushChanges sends state changes to the task's push webhooks: the
// submitted task, STATE_CHANGE updates, the end. A webhook wants to know
// when to look, not every token.
func (s *Server) pushChanges(t *liveTask, changes []a2a.Event) {
	cfgs, err := s.cfg.PushStore.List(s.ctx, t.id)
	if err != nil {
		s.log.Warn("a2a: cannot read push configs", "task", t.id, "err", err)
		return
	}
	for _, ev := range changes {
		for _, c := range cfgs {
			if err := s.cfg.PushSender.SendPush(s.ctx, c, ev); err != nil {
				s.log.Warn("a2a: push notification failed", "task", t.id, "url", c.URL, "err", err)
			}
		}
	}
}

// endExecution marks the execution over and wakes its followers.
func (s *Server) endExecution(t *liveTask) {
	t.mu.Lock()
	t.running = false
	t.signal()
	t.mu.Unlock()
}

// follow yields the task's events from log position from to the end of
// the execution. A client that goes away stops following; by the
// server's policy its run is aborted or left to finish.
func (s *Server) follow(ctx context.Context, t *liveTask, from int, yield func(a2a.Event, error) bool) {
	hint := hintFrom(ctx)
	if hint == nil {
		hint = &batchHint{}
	}
	defer func() { hint.more = false }()
	t.mu.Lock()
	changed := t.watch()
	t.mu.Unlock()
	defer t.unwatch(changed)
	for {
		t.mu.Lock()
		evs := t.log[from:]
		from = len(t.log)
		running := t.running
		t.mu.Unlock()
		for i, ev := range evs {
			// Events already in the log go out in one write.
			hint.more = i < len(evs)-1
			if !yield(ev, nil) {
				s.clientLeft(t)
				return
			}
			if ends(ev) {
				return
			}
		}
		if !running && len(evs) == 0 {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			// The client went away (its request's context ended). On a
			// shared session (/ws) the turn is everyone's: it goes on.
			if wsFrom(ctx) == nil {
				s.clientLeft(t)
			}
			return
		}
	}
}

// clientLeft applies the disconnect policy to a task whose follower left
// before its execution ended.
func (s *Server) clientLeft(t *liveTask) {
	t.mu.Lock()
	running, c := t.running, t.c
	t.mu.Unlock()
	if !running || c == nil {
		return
	}
	abort := s.cfg.OnDisconnect == DisconnectAbort
	if s.cfg.OnDisconnect == DisconnectAuto {
		cfgs, err := s.cfg.PushStore.List(s.ctx, t.id)
		abort = err != nil || len(cfgs) == 0
	}
	if !abort {
		return
	}
	t.mu.Lock()
	t.disconnected = true
	t.mu.Unlock()
	s.log.Info("a2a: client disconnected; aborting its task", "task", t.id)
	c.sess.Abort(errClientGone)
}

// translate converts a batch of items. Consecutive text deltas become
// one TEXT_CONTENT update: under load the queue holds many. done reports
// that the execution ends: the run ended, or it parked on a
// confirmation.
func (s *Server) translate(t *liveTask, items []item) (out []a2a.Event, done bool) {
	if t.pl != nil {
		return s.translatePlain(t, items)
	}
	// A lone delta's text is used as it is; only a run of them is
	// copied into text.
	var (
		text   strings.Builder
		lone   string
		textAt time.Time
	)
	add := func(s string) {
		switch {
		case s == "":
		case lone == "" && text.Len() == 0:
			lone = s
		default:
			if lone != "" {
				text.WriteString(lone)
				lone = ""
			}
			text.WriteString(s)
		}
	}
	flush := func() {
		if s := lone + text.String(); s != "" {
			cur := t.tr.at
			t.tr.at = textAt
			out = append(out, t.tr.text(s))
			t.tr.at = cur
			text.Reset()
			lone = ""
		}
	}
	defer func() { t.tr.at = time.Time{} }()
	for _, it := range items {
		t.tr.at = it.ev.Timestamp
		switch {
		case it.approval != nil:
			flush()
			out = append(out, t.tr.confirmation(it.approval.req, t.c.workspace)...)
			s.park(t, it.approval)
			out = append(out, t.tr.stateChange(a2a.TaskStateInputRequired, "", ""))
			// The run is blocked on this approval: nothing follows it.
			return out, true
		case it.executing != "":
			flush()
			out = append(out, t.tr.executing(it.executing)...)
		case it.ev.Type == runtime.EventMessage && it.ev.Message.Role == runtime.RoleAgent && onlyText(it.ev.Message.Content):
			if lone == "" && text.Len() == 0 {
				textAt = it.ev.Timestamp
			}
			for _, p := range it.ev.Message.Content {
				add(p.Text)
			}
		case it.ev.Type == runtime.EventAgentEnd:
			flush()
			out = append(out, s.final(t, it.ev.AgentEnd))
			return out, true
		default:
			flush()
			out = append(out, t.tr.event(it.ev)...)
		}
	}
	flush()
	return out, false
}

// park records that t's run waits on ap; a task a live stream has been
// on starts the idle policy's timer.
func (s *Server) park(t *liveTask, ap *approval) {
	t.mu.Lock()
	t.waiting = ap
	live := t.liveSeen
	t.mu.Unlock()
	ap.park(t)
	if live {
		s.armIdle(t, ap)
	}
}

func onlyText(parts []runtime.ContentPart) bool {
	for _, p := range parts {
		if p.Type != runtime.PartText {
			return false
		}
	}
	return len(parts) > 0
}

// final is the terminal update for how the run ended. Unlike gemini-cli,
// whose tasks never complete, a finished run completes its task; the
// conversation goes on in a new task of the same context.
func (s *Server) final(t *liveTask, end *runtime.AgentEnd) a2a.Event {
	switch end.Reason {
	case runtime.EndCompleted:
		return t.stateChange(a2a.TaskStateCompleted, "", "")
	case runtime.EndAborted:
		t.mu.Lock()
		gone, idled := t.disconnected, t.idled
		t.mu.Unlock()
		if gone {
			return t.stateChange(a2a.TaskStateCanceled, "Execution aborted by client.", "")
		}
		if idled > 0 {
			return t.stateChange(a2a.TaskStateCanceled, idleMessage(idled), "")
		}
		return t.stateChange(a2a.TaskStateCanceled, "Task cancelled.", "")
	}
	msg := t.lastError()
	if msg == "" {
		msg = fmt.Sprintf("the run ended: %s", end.Reason)
	}
	return t.stateChange(a2a.TaskStateFailed, msg, msg)
}

// translatePlain is translate for a plain task: consecutive text deltas
// become one artifact chunk; the answer's last chunk goes out before the
// terminal status.
func (s *Server) translatePlain(t *liveTask, items []item) (out []a2a.Event, done bool) {
	p := t.pl
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, p.chunk(text.String()))
			text.Reset()
		}
	}
	defer func() { p.at = time.Time{} }()
	for _, it := range items {
		p.at = it.ev.Timestamp
		switch {
		case it.approval != nil:
			flush()
			s.park(t, it.approval)
			out = append(out, p.status(a2a.TaskStateInputRequired, question(it.approval.req, t.c.workspace)))
			return out, true
		case it.executing != "":
			flush()
			out = append(out, p.executing(it.executing)...)
		case it.ev.Type == runtime.EventMessage && it.ev.Message.Role == runtime.RoleAgent && onlyText(it.ev.Message.Content):
			for _, part := range it.ev.Message.Content {
				text.WriteString(part.Text)
			}
		case it.ev.Type == runtime.EventAgentEnd:
			flush()
			if c := p.close(); c != nil {
				out = append(out, c)
			}
			out = append(out, s.final(t, it.ev.AgentEnd))
			return out, true
		default:
			flush()
			out = append(out, p.event(it.ev, t.tr.denied)...)
		}
	}
	flush()
	return out, false
}

// contentOf converts a message's parts into the runtime's content: text
// as text, data as its JSON, files by URL or inline bytes.
func contentOf(m *a2a.Message) ([]runtime.ContentPart, error) {
	var out []runtime.ContentPart
	for _, p := range m.Parts {
		switch c := p.Content.(type) {
		case a2a.Text:
			out = append(out, runtime.TextPart(string(c)))
		case a2a.Data:
			b, err := jsonText(c.Value)
			if err != nil {
				return nil, fmt.Errorf("data part: %w", err)
			}
			out = append(out, runtime.TextPart(b))
		case a2a.URL:
			out = append(out, runtime.ContentPart{Type: runtime.PartReference, URI: string(c), MimeType: p.MediaType})
		case a2a.Raw:
			out = append(out, runtime.ContentPart{Type: runtime.PartMedia, Data: base64Std(c), MimeType: p.MediaType})
		}
	}
	if len(out) == 0 {
		return nil, errors.New("the message has no content")
	}
	return out, nil
}

// refuse is the executor of a2a-go's handler, which agentry uses only for
// reads and push configs: every run goes through handler.
type refuse struct{}

func (refuse) Execute(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(nil, a2a.NewError(a2a.ErrInternalError, "agentry runs tasks itself"))
	}
}

func (refuse) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(nil, a2a.NewError(a2a.ErrInternalError, "agentry cancels tasks itself"))
	}
}
