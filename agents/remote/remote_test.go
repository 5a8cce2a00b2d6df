package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/genai"
	"google.golang.org/grpc"

	"github.com/agentry-dev/agentry/agents"
	"github.com/agentry-dev/agentry/compose"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/runtime/llm"
	"github.com/agentry-dev/agentry/subagents"
)

// testExecutor is a small A2A agent. What it does depends on the first
// word of the message: "ask" asks a question (input-required), "fail"
// fails, "hang" works until cancelled, "slow" is "hang" that says nothing
// until gate opens, "reply" answers with a message and no task, anything
// else streams status text, a thought and an artifact,
// then completes. A message that continues a task answers it.
type testExecutor struct {
	stop chan struct{} // closed when the test ends
	gate chan struct{} // opens a "slow" task

	mu       sync.Mutex
	calls    []execCall
	canceled []a2a.TaskID

	started    chan a2a.TaskID // a "hang" task is running
	cancelSeen chan a2a.TaskID // a cancel request arrived
}

// execCall is what the executor saw of one message.
type execCall struct {
	contextID string
	msgTask   a2a.TaskID // the task the message named
	taskID    a2a.TaskID // the task it ran as
	text      string
}

func newTestExecutor(t *testing.T) *testExecutor {
	x := &testExecutor{stop: make(chan struct{}), gate: make(chan struct{}), started: make(chan a2a.TaskID, 10), cancelSeen: make(chan a2a.TaskID, 10)}
	t.Cleanup(func() { close(x.stop) })
	return x
}

func (x *testExecutor) Calls() []execCall {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.calls)
}

func (x *testExecutor) Canceled() []a2a.TaskID {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.canceled)
}

func messageText(m *a2a.Message) string {
	var b strings.Builder
	for _, p := range m.Parts {
		b.WriteString(p.Text())
	}
	return b.String()
}

func (x *testExecutor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		text := messageText(ec.Message)
		x.mu.Lock()
		x.calls = append(x.calls, execCall{contextID: ec.ContextID, msgTask: ec.Message.TaskID, taskID: ec.TaskID, text: text})
		x.mu.Unlock()
		word, _, _ := strings.Cut(text, " ")
		if word == "reply" && ec.StoredTask == nil {
			m := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("pong"))
			m.ContextID = ec.ContextID
			yield(m, nil)
			return
		}
		if word == "slow" {
			x.started <- ec.TaskID
			select {
			case <-x.gate:
			case <-x.stop:
				return
			}
		}
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		status := func(state a2a.TaskState, text string) bool {
			var m *a2a.Message
			if text != "" {
				m = a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(text))
			}
			return yield(a2a.NewStatusUpdateEvent(ec, state, m), nil)
		}
		switch {
		case ec.StoredTask != nil:
			_ = status(a2a.TaskStateWorking, "") && status(a2a.TaskStateCompleted, "Read "+text+".")
		case word == "ask":
			_ = status(a2a.TaskStateWorking, "Thinking.") && status(a2a.TaskStateInputRequired, "Which file?")
		case word == "fail":
			_ = status(a2a.TaskStateWorking, "Trying.") && status(a2a.TaskStateFailed, "disk on fire")
		case word == "hang", word == "slow":
			if !status(a2a.TaskStateWorking, "Working on it.") {
				return
			}
			if word == "hang" {
				x.started <- ec.TaskID
			}
			select {
			case <-ctx.Done():
			case <-x.stop:
			}
		default:
			if !status(a2a.TaskStateWorking, "Looking at it.") {
				return
			}
			thought := a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("hmm")))
			thought.Metadata = map[string]any{"coderAgent": map[string]any{"kind": "thought"}}
			if !yield(thought, nil) {
				return
			}
			art := a2a.NewArtifactEvent(ec, a2a.NewTextPart("The answer"))
			art.Artifact.Name = "answer"
			if !yield(art, nil) || !yield(a2a.NewArtifactUpdateEvent(ec, art.Artifact.ID, a2a.NewTextPart(" is 42.")), nil) {
				return
			}
			status(a2a.TaskStateCompleted, "")
		}
	}
}

func (x *testExecutor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		x.mu.Lock()
		x.canceled = append(x.canceled, ec.TaskID)
		x.mu.Unlock()
		x.cancelSeen <- ec.TaskID
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// authCheck records the Authorization of every A2A call and, when want is
// set, refuses calls without it.
type authCheck struct {
	a2asrv.PassthroughCallInterceptor
	want string

	mu   sync.Mutex
	seen []string
}

func (a *authCheck) Before(ctx context.Context, callCtx *a2asrv.CallContext, _ *a2asrv.Request) (context.Context, any, error) {
	vals, _ := callCtx.ServiceParams().Get("Authorization")
	got := strings.Join(vals, ",")
	a.mu.Lock()
	a.seen = append(a.seen, callCtx.Method()+" "+got)
	a.mu.Unlock()
	if a.want != "" && got != a.want {
		return ctx, nil, a2a.ErrUnauthenticated
	}
	return ctx, nil, nil
}

func (a *authCheck) Seen() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.seen)
}

// remoteServer is an A2A server on the loopback interface.
type remoteServer struct {
	cardURL string
	card    *a2a.AgentCard
	exec    *testExecutor
	auth    *authCheck

	mu          sync.Mutex
	cardHeaders []string // the Authorization of each card request
}

func (s *remoteServer) CardHeaders() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.cardHeaders)
}

// serverOpts shape a test server.
type serverOpts struct {
	// binding is the card's interface: "jsonrpc" (default), "rest",
	// "grpc" (host:port), "grpc-dns" (dns:///host:port, as agentry serves),
	// "grpc-http" (http://host:port), or "v0.3" (JSON-RPC 0.3 with a 0.3
	// card, as gemini-cli's a2a-server serves).
	binding string
	// token is the Authorization every A2A call must carry; cardToken the
	// one the card request must.
	token, cardToken string
}

// startRemote starts an A2A server with a testExecutor.
func startRemote(t *testing.T, o serverOpts) *remoteServer {
	t.Helper()
	s := &remoteServer{exec: newTestExecutor(t), auth: &authCheck{want: o.token}}
	h := a2asrv.NewHandler(s.exec, a2asrv.WithCallInterceptors(s.auth))
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux) // 127.0.0.1
	t.Cleanup(srv.Close)
	s.cardURL = srv.URL + a2asrv.WellKnownAgentCardPath
	s.card = &a2a.AgentCard{
		Name: "Helper", Description: "Answers questions.", Version: "1.0.0",
		Capabilities:      a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "answer", Name: "Answer", Description: "Answers.", Tags: []string{"qa"}}},
	}
	var cardJSON []byte
	switch o.binding {
	case "", "jsonrpc":
		mux.Handle("/jsonrpc", a2asrv.NewJSONRPCHandler(h))
		s.card.SupportedInterfaces = []*a2a.AgentInterface{a2a.NewAgentInterface(srv.URL+"/jsonrpc", a2a.TransportProtocolJSONRPC)}
	case "rest":
		mux.Handle("/rest/", http.StripPrefix("/rest", a2asrv.NewRESTHandler(h)))
		s.card.SupportedInterfaces = []*a2a.AgentInterface{a2a.NewAgentInterface(srv.URL+"/rest", a2a.TransportProtocolHTTPJSON)}
	case "grpc", "grpc-dns", "grpc-http":
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		gs := grpc.NewServer()
		a2agrpc.NewHandler(h).RegisterWith(gs)
		go gs.Serve(lis)
		t.Cleanup(gs.Stop)
		prefix := map[string]string{"grpc": "", "grpc-dns": "dns:///", "grpc-http": "http://"}[o.binding]
		s.card.SupportedInterfaces = []*a2a.AgentInterface{a2a.NewAgentInterface(prefix+lis.Addr().String(), a2a.TransportProtocolGRPC)}
	case "v0.3":
		mux.Handle("/v0", a2av0.NewJSONRPCHandler(h))
		// A card of the 0.3 generation: url and preferredTransport, no
		// supportedInterfaces.
		cardJSON, _ = json.Marshal(map[string]any{
			"name": s.card.Name, "description": s.card.Description, "version": "1.0.0",
			"protocolVersion": "0.3.0", "url": srv.URL + "/v0", "preferredTransport": "JSONRPC",
			"capabilities": map[string]any{"streaming": true}, "defaultInputModes": []string{"text"},
			"defaultOutputModes": []string{"text"}, "skills": []any{},
		})
	default:
		t.Fatalf("unknown binding %q", o.binding)
	}
	cardHandler := a2asrv.NewStaticAgentCardHandler(s.card)
	if cardJSON != nil {
		cardHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(cardJSON)
		})
	}
	mux.Handle(a2asrv.WellKnownAgentCardPath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.cardHeaders = append(s.cardHeaders, r.Header.Get("Authorization"))
		s.mu.Unlock()
		if o.cardToken != "" && r.Header.Get("Authorization") != o.cardToken {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		cardHandler.ServeHTTP(w, r)
	}))
	return s
}

func remoteDef(s *remoteServer) agents.Definition {
	return agents.Definition{Name: "helper", Kind: agents.KindRemote, Description: "Answers questions.", AgentCardURL: s.cardURL}
}

// remoteTool returns an Invoker whose connections close with the test.
func remoteTool(t *testing.T) *Invoker {
	t.Helper()
	sub := NewInvoker(nil)
	t.Cleanup(func() {
		if err := sub.Close(); err != nil {
			t.Errorf("closing the remote agents: %v", err)
		}
	})
	return sub
}

func last(evs []runtime.Event) runtime.Event { return evs[len(evs)-1] }

func types(evs []runtime.Event) []runtime.EventType {
	out := make([]runtime.EventType, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

const streamedAnswer = "Looking at it.\n\nArtifact (answer):\nThe answer is 42."

// TestRemoteAgentStreamsToGoal: a task that streams status text, a
// thought and an artifact in two chunks, then completes, gives GOAL with
// gemini-cli's reassembled text, over each transport; every event reaches
// the sink with the A2A contextId as its thread id.
func TestRemoteAgentStreamsToGoal(t *testing.T) {
	for _, binding := range []string{"jsonrpc", "rest", "grpc", "grpc-dns", "grpc-http", "v0.3"} {
		t.Run(binding, func(t *testing.T) {
			s := startRemote(t, serverOpts{binding: binding})
			def := remoteDef(s)
			sub := remoteTool(t)
			var evs []runtime.Event
			res, err := sub.Invoke(t.Context(), def, "stream the answer", nil, func(ev runtime.Event) { evs = append(evs, ev) })
			if err != nil {
				t.Fatal(err)
			}
			calls := s.exec.Calls()
			if len(calls) != 1 || calls[0].text != "stream the answer" {
				t.Fatalf("the server saw %+v", calls)
			}
			if res.Agent != "helper" || res.TerminateReason != subagents.TerminateGoal || res.Result != streamedAnswer {
				t.Errorf("result %+v, want GOAL with %q", res, streamedAnswer)
			}
			if res.ThreadID == "" || res.ThreadID != calls[0].contextID {
				t.Errorf("thread id %q, want the server's context %q", res.ThreadID, calls[0].contextID)
			}
			if len(evs) == 0 || evs[0].Type != runtime.EventMessage || evs[0].Message.Role != runtime.RoleUser || last(evs).Type != runtime.EventAgentEnd {
				t.Fatalf("events %v, want message{user} … agent_end", types(evs))
			}
			if last(evs).AgentEnd.Reason != runtime.EndCompleted {
				t.Errorf("agent_end %+v, want completed", last(evs).AgentEnd)
			}
			var texts, thoughts []string
			for _, ev := range evs {
				if th, _ := ev.Meta["threadId"].(string); th != res.ThreadID {
					t.Errorf("%s event has thread id %q, want %q", ev.Type, th, res.ThreadID)
				}
				if ev.Type == runtime.EventMessage && ev.Message.Role == runtime.RoleAgent {
					for _, p := range ev.Message.Content {
						texts = append(texts, p.Text)
						thoughts = append(thoughts, p.Thought)
					}
				}
			}
			if !slices.Equal(texts, []string{"Looking at it.", "", "The answer", " is 42."}) || thoughts[1] != "hmm" {
				t.Errorf("agent messages %q, thoughts %q", texts, thoughts)
			}
		})
	}
}

// TestRemoteAgentKeepsContextAndTask: calls to one agent continue its A2A
// context; a task left input-required keeps its taskId, so the next call
// answers it, and a completed one does not.
func TestRemoteAgentKeepsContextAndTask(t *testing.T) {
	s := startRemote(t, serverOpts{})
	def := remoteDef(s)
	sub := remoteTool(t)
	r1, err := sub.Invoke(t.Context(), def, "ask me", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r1.TerminateReason != subagents.TerminateGoal || r1.Result != "Thinking.\n\nWhich file?" {
		t.Errorf("first call %+v, want the agent's question as a GOAL", r1)
	}
	r2, err := sub.Invoke(t.Context(), def, "b.go", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r2.TerminateReason != subagents.TerminateGoal || r2.Result != "Read b.go." {
		t.Errorf("second call %+v", r2)
	}
	r3, err := sub.Invoke(t.Context(), def, "stream again", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r3.Result != streamedAnswer {
		t.Errorf("third call %+v", r3)
	}
	c := s.exec.Calls()
	if len(c) != 3 {
		t.Fatalf("the server saw %d messages, want 3: %+v", len(c), c)
	}
	if c[0].msgTask != "" || c[1].msgTask != c[0].taskID || c[2].msgTask != "" || c[2].taskID == c[0].taskID {
		t.Errorf("task ids: %+v; want a new task, the same one answered, then a new one", c)
	}
	if c[1].contextID != c[0].contextID || c[2].contextID != c[0].contextID {
		t.Errorf("contexts %q %q %q, want one", c[0].contextID, c[1].contextID, c[2].contextID)
	}
	if r1.ThreadID != c[0].contextID || r2.ThreadID != r1.ThreadID || r3.ThreadID != r1.ThreadID {
		t.Errorf("thread ids %q %q %q, want %q", r1.ThreadID, r2.ThreadID, r3.ThreadID, c[0].contextID)
	}
}

// TestRemoteAgentFailedTask: a failed task is an ERROR result with the
// remote's message, for the parent's model to read; the next call starts a
// new task in the same context.
func TestRemoteAgentFailedTask(t *testing.T) {
	s := startRemote(t, serverOpts{})
	def := remoteDef(s)
	sub := remoteTool(t)
	var errs []string
	res, err := sub.Invoke(t.Context(), def, "fail now", nil, func(ev runtime.Event) {
		if ev.Type == runtime.EventError {
			errs = append(errs, ev.Error.Message)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.TerminateReason != subagents.TerminateError || res.Result != "Agent failed: disk on fire" {
		t.Errorf("result %+v, want ERROR with the remote's message", res)
	}
	if !slices.Equal(errs, []string{"disk on fire"}) {
		t.Errorf("error events %q", errs)
	}
	if _, err := sub.Invoke(t.Context(), def, "stream", nil, nil); err != nil {
		t.Fatal(err)
	}
	c := s.exec.Calls()
	if len(c) != 2 || c[1].msgTask != "" || c[1].contextID != c[0].contextID {
		t.Errorf("after a failed task the server saw %+v, want a new task in the same context", c)
	}
}

// TestRemoteAgentBearerAuth: a Bearer token from an environment variable
// goes with every A2A call and, being a public card, not with the card
// request.
func TestRemoteAgentBearerAuth(t *testing.T) {
	t.Setenv("AGENTRY_TEST_REMOTE_TOKEN", "s3cret")
	s := startRemote(t, serverOpts{token: "Bearer s3cret"})
	def := remoteDef(s)
	def.Auth = &agents.Auth{Type: "http", Scheme: "Bearer", Token: "$AGENTRY_TEST_REMOTE_TOKEN"}
	sub := remoteTool(t)
	res, err := sub.Invoke(t.Context(), def, "stream", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.TerminateReason != subagents.TerminateGoal {
		t.Fatalf("result %+v", res)
	}
	seen := s.auth.Seen()
	if len(seen) == 0 {
		t.Fatal("the server saw no call")
	}
	for _, s := range seen {
		if !strings.HasSuffix(s, " Bearer s3cret") {
			t.Errorf("call %q lacks the token", s)
		}
	}
	if h := s.CardHeaders(); len(h) != 1 || h[0] != "" {
		t.Errorf("card requests carried %q, want one without credentials", h)
	}
}

// TestRemoteAgentAuthFailures: a token variable that is not set is a clear
// ERROR naming auth.token, before anything is sent; a wrong token is the
// server's refusal as an ERROR.
func TestRemoteAgentAuthFailures(t *testing.T) {
	s := startRemote(t, serverOpts{token: "Bearer s3cret"})
	def := remoteDef(s)
	def.Auth = &agents.Auth{Type: "http", Scheme: "Bearer", Token: "${AGENTRY_TEST_UNSET_TOKEN}"}
	sub := remoteTool(t)
	res, err := sub.Invoke(t.Context(), def, "stream", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.TerminateReason != subagents.TerminateError || !strings.Contains(res.Result, "auth.token") || !strings.Contains(res.Result, "AGENTRY_TEST_UNSET_TOKEN") {
		t.Errorf("result %+v, want an ERROR naming auth.token and the variable", res)
	}
	if len(s.CardHeaders()) != 0 || len(s.auth.Seen()) != 0 {
		t.Error("a request went out without its credentials")
	}

	t.Setenv("AGENTRY_TEST_WRONG_TOKEN", "guess")
	def.Auth = &agents.Auth{Type: "http", Scheme: "Bearer", Token: "$AGENTRY_TEST_WRONG_TOKEN"}
	sub = remoteTool(t)
	res, err = sub.Invoke(t.Context(), def, "stream", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.TerminateReason != subagents.TerminateError || !strings.Contains(res.Result, "unauthenticated") {
		t.Errorf("result %+v, want the server's refusal as an ERROR", res)
	}
}

// TestRemoteAgentCardAuth: the credentials go with the card request when
// agent_card_requires_auth says so; without it a protected card cannot be
// fetched.
func TestRemoteAgentCardAuth(t *testing.T) {
	s := startRemote(t, serverOpts{cardToken: "Basic dTpw"}) // u:p
	def := remoteDef(s)
	def.Auth = &agents.Auth{Type: "http", Scheme: "Basic", Username: "u", Password: "p", AgentCardRequiresAuth: true}
	res, err := remoteTool(t).Invoke(t.Context(), def, "stream", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.TerminateReason != subagents.TerminateGoal {
		t.Errorf("with the card's credentials: %+v", res)
	}
	def.Auth.AgentCardRequiresAuth = false
	res, err = remoteTool(t).Invoke(t.Context(), def, "stream", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.TerminateReason != subagents.TerminateError || !strings.Contains(res.Result, "401") {
		t.Errorf("without the card's credentials: %+v, want an ERROR with the 401", res)
	}
}

// TestRemoteAgentCardJSON: an inline card takes the place of the card URL.
func TestRemoteAgentCardJSON(t *testing.T) {
	s := startRemote(t, serverOpts{})
	b, err := json.Marshal(s.card)
	if err != nil {
		t.Fatal(err)
	}
	def := agents.Definition{Name: "helper", Kind: agents.KindRemote, AgentCardJSON: string(b)}
	res, err := remoteTool(t).Invoke(t.Context(), def, "stream", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.TerminateReason != subagents.TerminateGoal || res.Result != streamedAnswer {
		t.Errorf("result %+v", res)
	}
	if len(s.CardHeaders()) != 0 {
		t.Error("the card was fetched although it was given inline")
	}
}

// TestRemoteAgentCancel: a parent that gives up gets its cause back,
// promptly, and the remote task is cancelled; the next call starts a new
// task.
func TestRemoteAgentCancel(t *testing.T) {
	s := startRemote(t, serverOpts{})
	def := remoteDef(s)
	sub := remoteTool(t)
	errStop := errors.New("the user pressed escape")
	ctx, cancel := context.WithCancelCause(t.Context())
	type outcome struct {
		res subagents.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := sub.Invoke(ctx, def, "hang on", nil, nil)
		done <- outcome{res, err}
	}()
	var task a2a.TaskID
	select {
	case task = <-s.exec.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the remote task did not start")
	}
	cancel(errStop)
	var o outcome
	select {
	case o = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not return after its context was cancelled")
	}
	if !errors.Is(o.err, errStop) {
		t.Errorf("error %v, want the cause %v", o.err, errStop)
	}
	if got := s.exec.Canceled(); !slices.Equal(got, []a2a.TaskID{task}) {
		t.Errorf("the server cancelled %q, want %q", got, task)
	}
	if _, err := sub.Invoke(t.Context(), def, "stream", nil, nil); err != nil {
		t.Fatal(err)
	}
	if c := s.exec.Calls(); len(c) != 2 || c[1].msgTask != "" {
		t.Errorf("after a cancel the server saw %+v, want a new task", c)
	}
}

// TestRemoteAgentCancelBeforeTaskID: a call cancelled before the agent
// has named its task waits for the task's id, then cancels the task.
func TestRemoteAgentCancelBeforeTaskID(t *testing.T) {
	s := startRemote(t, serverOpts{})
	def := remoteDef(s)
	sub := remoteTool(t)
	ctx, cancel := context.WithCancelCause(t.Context())
	done := make(chan error, 1)
	var forwarded []runtime.Event
	go func() {
		_, err := sub.Invoke(ctx, def, "slow start", nil, func(ev runtime.Event) { forwarded = append(forwarded, ev) })
		done <- err
	}()
	task := <-s.exec.started
	cancel(runtime.ErrAborted)
	time.Sleep(50 * time.Millisecond) // the abort is seen before the task is named
	close(s.exec.gate)
	select {
	case err := <-done:
		if !errors.Is(err, runtime.ErrAborted) {
			t.Errorf("error %v, want runtime.ErrAborted", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not return")
	}
	if got := s.exec.Canceled(); !slices.Equal(got, []a2a.TaskID{task}) {
		t.Errorf("the server cancelled %q, want %q", got, task)
	}
	for _, ev := range forwarded {
		if ev.Type == runtime.EventMessage && ev.Message.Role == runtime.RoleAgent {
			t.Errorf("an aborted stream relayed %+v", ev.Message)
		}
	}
}

// TestRemoteAgentTimeout: a task that outlives the time limit is a TIMEOUT
// result, and the remote task is cancelled.
func TestRemoteAgentTimeout(t *testing.T) {
	s := startRemote(t, serverOpts{})
	def := remoteDef(s)
	sub := remoteTool(t)
	sub.timeout = 300 * time.Millisecond
	res, err := sub.Invoke(t.Context(), def, "hang on", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.TerminateReason != subagents.TerminateTimeout || res.Result != "Agent timed out after 300ms." {
		t.Errorf("result %+v", res)
	}
	if len(s.exec.Canceled()) != 1 {
		t.Errorf("the server cancelled %q, want the task", s.exec.Canceled())
	}
}

// TestRemoteAgentUnreachable: a card that cannot be fetched is an ERROR
// result, and the next call tries to connect again.
func TestRemoteAgentUnreachable(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close() // nothing listens there now
	def := agents.Definition{Name: "helper", Kind: agents.KindRemote, AgentCardURL: "http://" + addr + "/card.json"}
	sub := remoteTool(t)
	res, err := sub.Invoke(t.Context(), def, "stream", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.TerminateReason != subagents.TerminateError || !strings.HasPrefix(res.Result, "Agent failed: ") || !strings.Contains(res.Result, addr) {
		t.Errorf("result %+v", res)
	}
	sub.mu.Lock()
	kept := len(sub.entries)
	sub.mu.Unlock()
	if kept != 0 {
		t.Error("a failed connection was kept")
	}
}

// TestRemoteAgentConcurrentCalls: calls to one agent at the same time run
// one after another on its connection and all succeed.
func TestRemoteAgentConcurrentCalls(t *testing.T) {
	s := startRemote(t, serverOpts{})
	def := remoteDef(s)
	sub := remoteTool(t)
	var wg sync.WaitGroup
	results := make([]subagents.Result, 4)
	for i := range results {
		wg.Go(func() {
			res, err := sub.Invoke(t.Context(), def, fmt.Sprintf("stream %d", i), nil, func(runtime.Event) {})
			if err != nil {
				t.Error(err)
			}
			results[i] = res
		})
	}
	wg.Wait()
	for i, r := range results {
		if r.TerminateReason != subagents.TerminateGoal || r.Result != streamedAnswer {
			t.Errorf("call %d: %+v", i, r)
		}
	}
	if n := len(s.exec.Calls()); n != 4 {
		t.Errorf("the server saw %d messages, want 4", n)
	}
}

type approverFunc func(context.Context, runtime.ApprovalRequest) (runtime.Outcome, error)

func (f approverFunc) Approve(ctx context.Context, r runtime.ApprovalRequest) (runtime.Outcome, error) {
	return f(ctx, r)
}

// TestRemoteSubagentInParentSession: a parent session built from
// settings with Invokers, whose model calls invoke_agent for a remote
// agent: the call is asked about, then its tool result carries the
// remote's answer and its events reach the parent as tool_updates with
// the A2A context as thread id.
func TestRemoteSubagentInParentSession(t *testing.T) {
	s := startRemote(t, serverOpts{})
	model := fakegemini.New(t)
	model.Enqueue(
		fakegemini.Calls(&genai.FunctionCall{ID: "p1", Name: subagents.InvokeAgentToolName,
			Args: map[string]any{"agent_name": "helper", "prompt": "stream the answer"}}),
		fakegemini.Text("The helper says 42."),
	)
	var mu sync.Mutex
	var asked []string
	approver := approverFunc(func(_ context.Context, r runtime.ApprovalRequest) (runtime.Outcome, error) {
		mu.Lock()
		asked = append(asked, r.Tool)
		mu.Unlock()
		return runtime.ProceedOnce, nil
	})
	settings := config.Defaults()
	settings.Workspace = t.TempDir()
	settings.Home = filepath.Join(t.TempDir(), ".agentry")
	settings.Session.Store = config.SessionStoreMemory
	settings.Model.Name = "gemini-2.5-flash"
	resolver := llm.NewResolver(llm.ResolverConfig{Gemini: llm.GeminiConfig{APIKey: fakegemini.DefaultAPIKey, BaseURL: model.URL}})
	sess, err := compose.FromSettings(t.Context(), &settings, compose.Options{
		Resolver: resolver, Approver: approver, Agents: []agents.Definition{remoteDef(s)},
		RemoteAgents: Invokers, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	id, err := sess.Send(t.Context(), runtime.TextMessage("ask the helper"))
	if err != nil {
		t.Fatal(err)
	}
	var evs []runtime.Event
	for ev, err := range sess.Stream(t.Context(), id) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	if last(evs).AgentEnd.Reason != runtime.EndCompleted {
		t.Fatalf("parent ended %+v", last(evs).AgentEnd)
	}
	mu.Lock()
	if len(asked) != 1 {
		t.Errorf("asked %q, want one question for the remote call", asked)
	}
	mu.Unlock()
	want := "Subagent 'helper' finished.\nTermination Reason: GOAL\nResult:\n" + streamedAnswer
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	var got any
	for _, c := range reqs[1].Body.Contents {
		for _, p := range c.Parts {
			if fr := p.FunctionResponse; fr != nil && fr.Name == subagents.InvokeAgentToolName {
				got = fr.Response["output"]
			}
		}
	}
	if got != want {
		t.Errorf("parent got %q, want %q", got, want)
	}
	contextID := s.exec.Calls()[0].contextID
	var forwarded []string
	for _, ev := range evs {
		if ev.Type == runtime.EventToolUpdate && ev.ToolUpdate.RequestID == "p1" && ev.ToolUpdate.Data["threadId"] == contextID {
			for _, p := range ev.ToolUpdate.Content {
				forwarded = append(forwarded, p.Text)
			}
		}
	}
	if !slices.Contains(forwarded, "Looking at it.") {
		t.Errorf("tool_updates with the remote's thread carried %q", forwarded)
	}
}

// TestRemoteAgentProtocol drives an Agent through AgentProtocol: the
// events of each kind of answer, replay, subscribers, queued sends, Abort
// and Close.
func TestRemoteAgentProtocol(t *testing.T) {
	s := startRemote(t, serverOpts{})
	var n int
	ra, err := New(t.Context(), Config{
		Definition: remoteDef(s),
		Now:        func() time.Time { return time.Unix(0, 0) },
		NewID:      func() string { n++; return fmt.Sprintf("s%d", n) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ra.Close() })
	if ra.Card().Name != "Helper" {
		t.Errorf("card %+v", ra.Card())
	}
	var subscribed []runtime.Event
	var subMu sync.Mutex
	unsub := ra.Subscribe(func(ev runtime.Event) {
		subMu.Lock()
		subscribed = append(subscribed, ev)
		subMu.Unlock()
	})
	collect := func(id string) []runtime.Event {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		var evs []runtime.Event
		for ev, err := range ra.Stream(ctx, id) {
			if err != nil {
				t.Fatalf("stream %s: %v", id, err)
			}
			evs = append(evs, ev)
		}
		return evs
	}
	send := func(text string) string {
		t.Helper()
		id, err := ra.Send(t.Context(), runtime.TextMessage(text))
		if err != nil {
			t.Fatal(err)
		}
		return id
	}

	// Two sends queue: both streams run, in order.
	id1, id2 := send("stream one"), send("ask two")
	evs := collect(id1)
	if got, want := types(evs), []runtime.EventType{runtime.EventMessage, runtime.EventAgentStart, runtime.EventMessage, runtime.EventMessage, runtime.EventMessage, runtime.EventMessage, runtime.EventAgentEnd}; !slices.Equal(got, want) {
		t.Errorf("stream one: %v, want %v", got, want)
	}
	if evs[0].ID != "s1-0" || evs[0].Message.Content[0].Text != "stream one" || last(evs).ID != "s1-6" {
		t.Errorf("stream one's first and last events: %+v, %+v", evs[0], last(evs))
	}
	if end := last(evs).AgentEnd; end.Reason != runtime.EndCompleted || end.Data["result"] != streamedAnswer || end.Data["taskState"] != "completed" {
		t.Errorf("stream one ended %+v", end)
	}
	if evs := collect(id2); last(evs).AgentEnd.Reason != runtime.EndElicitation || last(evs).AgentEnd.Data["result"] != "Thinking.\n\nWhich file?" {
		t.Errorf("stream two ended %+v", last(evs).AgentEnd)
	}
	if ra.TaskID() == "" || ra.ContextID() == "" {
		t.Errorf("after a question: context %q, task %q", ra.ContextID(), ra.TaskID())
	}
	if evs := collect(send("a.go")); last(evs).AgentEnd.Reason != runtime.EndCompleted || ra.TaskID() != "" {
		t.Errorf("the answer ended %+v with task %q kept", last(evs).AgentEnd, ra.TaskID())
	}

	// A failed task: a fatal error event, then agent_end failed.
	evs = collect(send("fail"))
	if got := types(evs[len(evs)-2:]); !slices.Equal(got, []runtime.EventType{runtime.EventError, runtime.EventAgentEnd}) ||
		!evs[len(evs)-2].Error.Fatal || evs[len(evs)-2].Error.Message != "disk on fire" || last(evs).AgentEnd.Reason != runtime.EndFailed {
		t.Errorf("a failed task ended %v: %+v", got, evs[len(evs)-2:])
	}

	// An answer without a task.
	evs = collect(send("reply"))
	if end := last(evs).AgentEnd; end.Reason != runtime.EndCompleted || end.Data["result"] != "pong" {
		t.Errorf("a message reply ended %+v", end)
	}

	// Abort cancels the remote task and ends the stream aborted.
	id := send("hang")
	task := <-s.exec.started
	ra.Abort(nil)
	if end := last(collect(id)).AgentEnd; end.Reason != runtime.EndAborted {
		t.Errorf("an aborted stream ended %+v", end)
	}
	if got := s.exec.Canceled(); !slices.Equal(got, []a2a.TaskID{task}) {
		t.Errorf("the server cancelled %q, want %q", got, task)
	}

	// The log, the subscriber and the streams agree.
	unsub()
	all := ra.Events()
	subMu.Lock()
	if len(all) != len(subscribed) {
		t.Errorf("%d events logged, %d seen by the subscriber", len(all), len(subscribed))
	}
	for i := range min(len(all), len(subscribed)) {
		if all[i].ID != subscribed[i].ID {
			t.Errorf("event %d: log %s, subscriber %s", i, all[i].ID, subscribed[i].ID)
			break
		}
	}
	subMu.Unlock()
	if replay := collect(id1); len(replay) != 7 {
		t.Errorf("replaying stream one gave %d events, want 7", len(replay))
	}

	if _, err := ra.Send(t.Context(), runtime.Send{Update: &runtime.SessionUpdate{Model: "x"}}); !errors.Is(err, runtime.ErrInvalidSend) {
		t.Errorf("an update: %v, want runtime.ErrInvalidSend", err)
	}
	for _, err := range ra.Stream(t.Context(), "nope") {
		if !errors.Is(err, runtime.ErrUnknownStream) {
			t.Errorf("an unknown stream: %v", err)
		}
	}
	if err := ra.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ra.Send(t.Context(), runtime.TextMessage("more")); !errors.Is(err, runtime.ErrClosed) {
		t.Errorf("Send after Close: %v, want runtime.ErrClosed", err)
	}
}

// TestRemoteAgentRefusedStream: a JSON-RPC server that refuses a
// streaming request with an HTTP error and the JSON-RPC error as its body
// (as agentry serve does) has its reason, not just its status, reach the
// caller's model.
func TestRemoteAgentRefusedStream(t *testing.T) {
	const reason = "task t1 is waiting for an answer about tool call c1 (write_file): reply with text: yes, always or no"
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux) // 127.0.0.1
	t.Cleanup(srv.Close)
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(&a2a.AgentCard{
		Name: "Refuser", Description: "Refuses.", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(srv.URL+"/rpc", a2a.TransportProtocolJSONRPC)},
		Capabilities:        a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
	}))
	mux.HandleFunc("POST /rpc", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, "{\"jsonrpc\":\"2.0\",\"id\":%s,\n\"error\":{\"code\":-32602,\"message\":%q}}\n", req.ID, reason)
	})
	def := agents.Definition{Name: "refuser", Kind: agents.KindRemote, AgentCardURL: srv.URL + a2asrv.WellKnownAgentCardPath}
	sub := remoteTool(t)
	var errs []string
	res, err := sub.Invoke(t.Context(), def, "yes please", nil, func(ev runtime.Event) {
		if ev.Type == runtime.EventError {
			errs = append(errs, ev.Error.Status+" "+ev.Error.Message)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0], runtime.StatusInvalidArgument+" ") || !strings.Contains(errs[0], reason) {
		t.Errorf("error events %q, want one %s naming the server's reason", errs, runtime.StatusInvalidArgument)
	}
	if res.TerminateReason != subagents.TerminateError || !strings.Contains(res.Result, reason) {
		t.Errorf("result %+v", res)
	}
}
