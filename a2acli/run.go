package a2acli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentry-dev/agentry/internal/a2adial"
	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/protocol/liveclient"
	"github.com/agentry-dev/agentry/protocol/wsclient"
)

// cancelTimeout bounds the CancelTask call of an interrupted run, which
// runs after the run's own context has ended.
const cancelTimeout = 10 * time.Second

// Run sends cfg.Prompt to the agent at cfg.URL (or follows cfg.TaskID)
// and streams the task's events to cfg.Out and cfg.Err until the task
// ends, or waits for input nothing here can give. A confirmation or a
// question on the way is answered (see Config.Approve, Config.Answers)
// and the task goes on. When ctx ends, the task is cancelled and the
// error is ErrInterrupted. A *UsageError reports a configuration Run
// cannot act on; other errors, an agent that cannot be reached or a call
// that failed, name the interface and the cause.
func Run(ctx context.Context, cfg Config) (Outcome, error) {
	if err := cfg.check(); err != nil {
		return Outcome{}, err
	}
	ag, err := locate(&cfg)
	if err != nil {
		return Outcome{}, err
	}
	c, err := connect(ctx, &cfg, &ag, httpClient(cfg.HTTPClient))
	if err != nil {
		if context.Cause(ctx) != nil {
			return Outcome{}, fmt.Errorf("%w: %w", ErrInterrupted, context.Cause(ctx))
		}
		return Outcome{}, err
	}
	defer c.close()
	var out output = &jsonOutput{out: cfg.Out, err: cfg.Err}
	if cfg.Output == OutputText {
		out = newTextOutput(cfg.Out, cfg.Err, cfg.Dim)
	}
	name := ""
	if ag.card != nil {
		name = ag.card.Name
	}
	out.connected(name, c.where())
	r := &run{cfg: &cfg, conn: c, out: out, ask: newAsker(&cfg), t: newTracker()}
	o, err := r.run(ctx)
	if err == nil || errors.Is(err, ErrInterrupted) {
		out.end(o, r.t.reason, cfg.URL)
	}
	return o, err
}

// httpClient is the client of the card request and the HTTP bindings:
// the caller's, or one without an overall timeout (a task streams as long
// as it runs; dial, TLS and idle timeouts still apply), wrapped so that a
// refused JSON-RPC stream keeps its reason, and so does a refused token.
func httpClient(hc *http.Client) *http.Client {
	if hc == nil {
		hc = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	return &http.Client{Transport: a2adial.RefusedStreams(refusals{base: base}), CheckRedirect: hc.CheckRedirect, Jar: hc.Jar, Timeout: hc.Timeout}
}

// connect reads the card and opens the transport cfg names.
func connect(ctx context.Context, cfg *Config, ag *agent, hc *http.Client) (conn, error) {
	// wsclient reads a refused handshake's reason itself.
	wsHC := cfg.HTTPClient
	if ag.wsURL != "" {
		return wsDial(ctx, cfg, ag.wsURL, wsHC)
	}
	if err := ag.readCard(ctx, cfg, hc); err != nil {
		return nil, err
	}
	switch cfg.Transport {
	case TransportWS:
		u := ag.base + "/ws"
		if is := ag.interfaces(WSBinding); len(is) > 0 {
			u = is[0].URL
		}
		return wsDial(ctx, cfg, u, wsHC)
	case TransportLive:
		ifaces := ag.interfaces(a2a.TransportProtocolGRPC)
		if len(ifaces) == 0 {
			return nil, ag.noBinding(cfg)
		}
		c, err := dialLive(ctx, cfg, ag.card, ifaces[0], hc)
		if err != nil {
			return nil, fmt.Errorf("cannot reach the agent at %s over %s: %w", cfg.URL, describe(ifaces[0]), err)
		}
		return c, nil
	case TransportAuto:
		if is := ag.interfaces(a2a.TransportProtocolGRPC); len(is) > 0 && liveclient.Supported(ag.cardJSON) {
			if c, err := dialLive(ctx, cfg, ag.card, is[0], hc); err == nil {
				return c, nil
			}
		}
		c, err := dialSDK(ctx, cfg, ag.card, ag.card.SupportedInterfaces, hc, nil)
		if err == nil {
			return c, nil
		}
		if is := ag.interfaces(WSBinding); len(is) > 0 && !cfg.Plain {
			return wsDial(ctx, cfg, is[0].URL, wsHC)
		}
		return nil, fmt.Errorf("cannot reach the agent at %s over any interface its card lists (%s): %w", cfg.URL, ag.listed(), err)
	}
	ifaces := ag.interfaces(bindings[cfg.Transport])
	if len(ifaces) == 0 {
		return nil, ag.noBinding(cfg)
	}
	c, err := dialSDK(ctx, cfg, ag.card, ifaces, hc, nil)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the agent at %s over %s: %w", cfg.URL, describe(ifaces[0]), err)
	}
	return c, nil
}

// wsDial dials /ws, explaining a refusal.
func wsDial(ctx context.Context, cfg *Config, u string, hc *http.Client) (conn, error) {
	c, err := dialWS(ctx, cfg, u, hc)
	if err != nil {
		return nil, explain(fmt.Errorf("cannot connect to %s: %w", u, err))
	}
	return c, nil
}

// explain adds what to check to an error that says the token was wrong.
func explain(err error) error {
	var he *wsclient.HandshakeError
	var re *RefusedError
	switch {
	case errors.Is(err, a2a.ErrUnauthenticated), errors.Is(err, a2a.ErrUnauthorized),
		errors.As(err, &he) && he.StatusCode == http.StatusUnauthorized,
		errors.As(err, &re) && re.StatusCode == http.StatusUnauthorized,
		status.Code(err) == codes.Unauthenticated,
		strings.Contains(err.Error(), "401 Unauthorized"):
		return fmt.Errorf("%w; is --token (or AGENTRY_A2A_TOKEN) the agent's bearer token?", err)
	}
	return err
}

// run is one Run under way.
type run struct {
	cfg  *Config
	conn conn
	out  output
	ask  *asker
	t    *tracker
}

func (r *run) outcome() Outcome {
	return Outcome{State: r.t.state, TaskID: r.t.taskID, ContextID: r.t.contextID}
}

// run sends the prompt (or follows the task) and, while the task waits
// for an answer that can be given, answers and follows it again.
func (r *run) run(ctx context.Context) (Outcome, error) {
	var events iter.Seq2[a2a.Event, error]
	if strings.TrimSpace(r.cfg.Prompt) == "" {
		r.t.taskID = a2a.TaskID(r.cfg.TaskID)
		events = r.reattach(ctx)
	} else {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(r.cfg.Prompt))
		msg.ContextID, msg.TaskID = r.cfg.ContextID, a2a.TaskID(r.cfg.TaskID)
		events = r.conn.send(ctx, &a2a.SendMessageRequest{Message: msg})
	}
	for {
		if err := r.follow(events); err != nil {
			err = r.failed(ctx, err)
			return r.outcome(), err
		}
		if r.t.state != a2a.TaskStateInputRequired {
			break
		}
		req, err := r.answer(ctx)
		if errors.Is(err, errAnsweredElsewhere) {
			// Somebody else answered (the terminal, the IDE, another
			// client): follow the task on from there.
			events = r.follows(ctx, r.conn.resume, true)
			continue
		}
		if err != nil {
			err = r.failed(ctx, err)
			return r.outcome(), err
		}
		if req == nil {
			break
		}
		events = r.conn.send(ctx, req)
	}
	switch s := r.t.state; {
	case s == "", s == a2a.TaskStateSubmitted, s == a2a.TaskStateWorking:
		if ctx.Err() != nil {
			err := r.failed(ctx, ctx.Err())
			return r.outcome(), err
		}
		return r.outcome(), fmt.Errorf("%s: the stream ended while the task was %s; follow it with --task %s", r.conn.where(), stateOr(s), r.t.taskID)
	}
	return r.outcome(), nil
}

func stateOr(s a2a.TaskState) string {
	if s == "" {
		return "not yet named"
	}
	return stateName(s)
}

// follow renders a stream's events until it ends, or until the task ends
// or waits for the caller.
func (r *run) follow(events iter.Seq2[a2a.Event, error]) error {
	for ev, err := range events {
		if err != nil {
			return err
		}
		r.t.observe(ev)
		r.out.event(ev)
		if final(ev) {
			return nil
		}
	}
	return nil
}

// final reports whether ev ends a stream's part in the task: a final
// state, a wait for the caller, or a message (an answer without a task).
func final(ev a2a.Event) bool {
	switch e := ev.(type) {
	case *a2a.Message:
		return true
	case *a2a.Task:
		return waits(e.Status.State)
	case *a2a.TaskStatusUpdateEvent:
		return waits(e.Status.State)
	}
	return false
}

func waits(s a2a.TaskState) bool {
	return s.Terminal() || s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}

// failed turns a stream's error into Run's: an interruption cancels the
// task.
func (r *run) failed(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil {
		r.cancelTask(ctx)
		return fmt.Errorf("%w: %w", ErrInterrupted, cause)
	}
	return explain(fmt.Errorf("%s: %w", r.conn.where(), err))
}

// cancelTask cancels the task of an interrupted run, on a context of its
// own.
func (r *run) cancelTask(ctx context.Context) {
	if r.t.taskID == "" || r.t.state.Terminal() {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer cancel()
	if err := r.conn.cancel(cctx, r.t.taskID); err != nil {
		r.out.warn(fmt.Sprintf("cannot cancel task %s: %v", r.t.taskID, err))
		return
	}
	r.t.state = a2a.TaskStateCanceled
}

// reattach follows the task: SubscribeToTask while it runs; a task that
// does not run (it waits for input, or has ended) is read with GetTask
// instead.
func (r *run) reattach(ctx context.Context) iter.Seq2[a2a.Event, error] {
	return r.follows(ctx, r.conn.subscribe, false)
}

// follows follows the task through how (subscribe or resume), or reads
// it with GetTask when how fails at once (the task has ended); catchUp
// then shows what the task said since the last user message, which this
// run did not see.
func (r *run) follows(ctx context.Context, how func(context.Context, a2a.TaskID) iter.Seq2[a2a.Event, error], catchUp bool) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		started := false
		for ev, err := range how(ctx, r.t.taskID) {
			if err != nil && !started && ctx.Err() == nil {
				task, gerr := r.conn.get(ctx, r.t.taskID)
				if gerr != nil {
					yield(nil, fmt.Errorf("cannot follow task %s: %w (and GetTask: %w)", r.t.taskID, err, gerr))
					return
				}
				if catchUp {
					r.out.catchUp(task)
				}
				yield(task, nil)
				return
			}
			started = true
			if !yield(ev, err) {
				return
			}
		}
	}
}

// answer builds the answer to a task waiting for input: the pending
// call's confirmation, or the user's reply to the question. It returns
// nil when nothing can answer (the task is left waiting).
func (r *run) answer(ctx context.Context) (*a2a.SendMessageRequest, error) {
	reply := func(parts ...*a2a.Part) *a2a.SendMessageRequest {
		msg := a2a.NewMessage(a2a.MessageRoleUser, parts...)
		msg.TaskID, msg.ContextID = r.t.taskID, r.t.contextID
		return &a2a.SendMessageRequest{Message: msg}
	}
	r.out.breakLine()
	if tc, ok := r.t.nextPending(); ok {
		actx, stop := r.watch(ctx, tc.ToolCallID)
		option, declined, err := r.ask.confirm(actx, tc)
		stop()
		if errors.Is(err, errAnsweredElsewhere) {
			r.t.answered[tc.ToolCallID] = true
			r.out.note(fmt.Sprintf("%s was answered elsewhere; following the task", oneLine(tc.ToolName)))
			return nil, err
		}
		if err != nil {
			return nil, err
		}
		r.t.answered[tc.ToolCallID] = true
		switch {
		case declined != nil:
			r.out.warn(fmt.Sprintf("%s was declined: %v. Answer confirmations with --approve yes|no, or give the prompt as arguments and the answers on stdin (y, a or n, one a line)", oneLine(tc.ToolName), declined))
		case r.cfg.Approve == ApproveYes:
			r.out.note(fmt.Sprintf("✓ %s allowed once (--approve yes): %s", oneLine(tc.ToolName), callDetail(tc)))
		case r.cfg.Approve == ApproveNo:
			r.out.note(fmt.Sprintf("✗ %s declined (--approve no): %s", oneLine(tc.ToolName), callDetail(tc)))
		}
		return reply(a2a.NewDataPart(map[string]any{"tool_call_id": tc.ToolCallID, "selected_option_id": option})), nil
	}
	actx, stop := r.watch(ctx, "")
	text, err := r.ask.question(actx, r.t.question)
	stop()
	switch {
	case errors.Is(err, errAnsweredElsewhere):
		r.out.note("The agent's question was answered elsewhere; following the task")
		return nil, err
	case errors.Is(err, errNoAnswer):
		r.out.warn(fmt.Sprintf("the agent's question was not answered: %v", err))
		return nil, nil
	case err != nil:
		return nil, err
	}
	return reply(a2a.NewTextPart(text)), nil
}

// errAnsweredElsewhere ends a question the task no longer waits for.
var errAnsweredElsewhere = errors.New("answered elsewhere")

// defaultWatchEvery is how often a task waiting on the user is read
// while the question is asked.
const defaultWatchEvery = time.Second

// watch returns a context for asking about the task's pending call (or
// its question, callID ""), cancelled with errAnsweredElsewhere once the
// task no longer waits for that answer: a shared session's terminal, its
// IDE or another client answered first. The task is read every
// Config.WatchEvery; stop ends the watch.
func (r *run) watch(ctx context.Context, callID string) (context.Context, func()) {
	actx, cancel := context.WithCancelCause(ctx)
	if r.cfg.Approve != ApproveAsk || r.t.taskID == "" {
		return actx, func() { cancel(nil) }
	}
	every := cmp.Or(r.cfg.WatchEvery, defaultWatchEvery)
	after := r.cfg.after
	if after == nil {
		after = time.After
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-after(every):
			case <-actx.Done():
				return
			}
			task, err := r.conn.get(actx, r.t.taskID)
			if err != nil {
				continue // the next read may work; the question stands
			}
			if !stillWaits(task, callID) {
				cancel(errAnsweredElsewhere)
				return
			}
		}
	}()
	return actx, func() {
		cancel(nil)
		<-done
	}
}

// stillWaits reports whether task still waits for the answer to callID
// (for its question, callID "").
func stillWaits(task *a2a.Task, callID string) bool {
	if task.Status.State != a2a.TaskStateInputRequired {
		return false
	}
	if callID == "" {
		return true
	}
	probe := newTracker()
	probe.observe(task)
	tc, ok := probe.calls[callID]
	return !ok || tc.Status == devtool.StatusPending
}

// tracker follows the task through its events: its ids and state, the
// reason it failed, its question, and the tool calls waiting for a
// confirmation.
type tracker struct {
	taskID    a2a.TaskID
	contextID string
	state     a2a.TaskState
	reason    string
	question  string
	// calls are the development-tool calls by id, with their order.
	calls    map[string]devtool.ToolCall
	order    []string
	answered map[string]bool
}

func newTracker() *tracker {
	return &tracker{calls: map[string]devtool.ToolCall{}, answered: map[string]bool{}}
}

func (t *tracker) observe(ev a2a.Event) {
	info := ev.TaskInfo()
	if info.TaskID != "" {
		t.taskID = info.TaskID
	}
	if info.ContextID != "" {
		t.contextID = info.ContextID
	}
	switch e := ev.(type) {
	case *a2a.Message:
		if e.Role != a2a.MessageRoleUser {
			t.state = a2a.TaskStateCompleted
		}
	case *a2a.Task:
		for _, m := range e.History {
			t.message(m)
		}
		t.status(e.Status, e.Metadata)
	case *a2a.TaskStatusUpdateEvent:
		t.status(e.Status, e.Metadata)
	}
}

// status notes a status: its state, the calls its message carries, and
// the text of a question or a failure.
func (t *tracker) status(s a2a.TaskStatus, meta map[string]any) {
	if s.State != "" && s.State != a2a.TaskStateUnspecified {
		t.state = s.State
	}
	t.message(s.Message)
	text := ""
	if s.Message != nil {
		text = strings.TrimSpace(partsText(s.Message.Parts))
	}
	if dev, ok := devtool.EventFrom(meta); ok && dev.Error != "" && text == "" {
		text = dev.Error
	}
	switch {
	case s.State == a2a.TaskStateInputRequired:
		t.question = text
	case s.State.Terminal() && s.State != a2a.TaskStateCompleted && text != "":
		t.reason = text
	}
}

// message notes the development-tool calls a message carries.
func (t *tracker) message(m *a2a.Message) {
	if m == nil {
		return
	}
	for _, p := range m.Parts {
		d, ok := p.Content.(a2a.Data)
		if !ok {
			continue
		}
		vm, ok := d.Value.(map[string]any)
		if !ok || vm["tool_call_id"] == nil || vm["status"] == nil {
			continue
		}
		tc, err := devtool.ToolCallFrom(vm)
		if err != nil || tc.ToolCallID == "" {
			continue
		}
		if _, seen := t.calls[tc.ToolCallID]; !seen {
			t.order = append(t.order, tc.ToolCallID)
		}
		t.calls[tc.ToolCallID] = tc
	}
}

// nextPending returns the first call waiting for a confirmation that has
// not been answered.
func (t *tracker) nextPending() (devtool.ToolCall, bool) {
	for _, id := range t.order {
		tc := t.calls[id]
		if tc.Status == devtool.StatusPending && tc.ConfirmationRequest != nil && !t.answered[id] {
			return tc, true
		}
	}
	return devtool.ToolCall{}, false
}

// maxRefusalBody bounds the body of a refusal read for its reason.
const maxRefusalBody = 4 << 10

// RefusedError is an HTTP refusal whose JSON body gave a reason,
// {"error": "…"}, as agentry serve's guard refuses a wrong token, Host or
// Origin: a2a-go's clients would report the status alone, or fail to
// decode the body.
type RefusedError struct {
	StatusCode int
	Reason     string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("refused with HTTP %d %s: %s", e.StatusCode, http.StatusText(e.StatusCode), e.Reason)
}

// refusals turns 401 and 403 responses with a reason into a
// *RefusedError.
type refusals struct{ base http.RoundTripper }

func (t refusals) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return resp, err
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxRefusalBody))
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var body struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(b, &body) != nil || body.Error == "" {
		resp.Body = io.NopCloser(bytes.NewReader(b))
		return resp, nil
	}
	return nil, &RefusedError{StatusCode: resp.StatusCode, Reason: body.Error}
}
