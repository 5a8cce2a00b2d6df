package protocol_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/protocol"
	"github.com/agentry-dev/agentry/protocol/devtool"
)

// describePlain summarises plain A2A events: Task(state), status:state
// with its text in brackets, artifact chunks as +"text" (appended) or
// ="text" (replacing), a last chunk marked with !.
func describePlain(evs []a2a.Event) string {
	var parts []string
	for _, ev := range evs {
		switch e := ev.(type) {
		case *a2a.Task:
			parts = append(parts, "Task("+state(e.Status.State)+")")
		case *a2a.TaskStatusUpdateEvent:
			s := "status:" + state(e.Status.State)
			if m := e.Status.Message; m != nil {
				s += fmt.Sprintf("[%q]", firstLine(messageText(m)))
			}
			parts = append(parts, s)
		case *a2a.TaskArtifactUpdateEvent:
			op := "="
			if e.Append {
				op = "+"
			}
			s := "artifact" + op + fmt.Sprintf("%q", partsText(e.Artifact.Parts))
			if e.LastChunk {
				s += "!"
			}
			parts = append(parts, s)
		default:
			parts = append(parts, fmt.Sprintf("%T", ev))
		}
	}
	return strings.Join(parts, " ")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func messageText(m *a2a.Message) string { return partsText(m.Parts) }

func partsText(parts a2a.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text())
	}
	return b.String()
}

// answerOf is the answer artifact's text as a client that honours append
// reassembles it.
func answerOf(evs []a2a.Event) string {
	var text string
	for _, ev := range evs {
		if e, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			if !e.Append {
				text = ""
			}
			text += partsText(e.Artifact.Parts)
		}
	}
	return text
}

// noDevtool fails the test if any event carries development-tool
// metadata or data parts.
func noDevtool(t *testing.T, evs []a2a.Event) {
	t.Helper()
	for _, ev := range evs {
		var meta map[string]any
		var msg *a2a.Message
		switch e := ev.(type) {
		case *a2a.Task:
			meta, msg = e.Metadata, e.Status.Message
		case *a2a.TaskStatusUpdateEvent:
			meta, msg = e.Metadata, e.Status.Message
		case *a2a.TaskArtifactUpdateEvent:
			meta = e.Metadata
		}
		if _, ok := meta[devtool.URI]; ok {
			t.Errorf("%T carries development-tool metadata: %v", ev, meta)
		}
		if msg != nil {
			for _, p := range msg.Parts {
				if _, ok := p.Content.(a2a.Text); !ok {
					t.Errorf("%T's message has a non-text part %v", ev, p.Content)
				}
			}
		}
	}
}

// reply is a plain text message continuing task.
func reply(task *a2a.Task, text string) *a2a.Message {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	m.TaskID, m.ContextID = task.ID, task.ContextID
	return m
}

// TestPlainStreamEveryBinding: a client that does not activate the
// extension gets plain A2A over every binding: the task, working, the
// answer as an artifact streamed in chunks and closed before completed,
// no development-tool metadata; GetTask returns the answer as one
// artifact.
func TestPlainStreamEveryBinding(t *testing.T) {
	for _, binding := range []string{"jsonrpc", "rest", "grpc", "v0.3"} {
		t.Run(binding, func(t *testing.T) {
			h := newHarness(t, []string{textTurn("Hello ", "from agentry.")})
			c := h.plainClient(binding)
			evs := collect(t, c, userMessage("say hello", ""))
			got := describePlain(evs)
			if !strings.HasPrefix(got, `Task(submitted) status:working artifact="Hello `) || !strings.HasSuffix(got, `artifact+""! status:completed`) {
				t.Fatalf("events: %s", got)
			}
			if a := answerOf(evs); a != "Hello from agentry." {
				t.Fatalf("answer %q", a)
			}
			noDevtool(t, evs)
			task, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: evs[0].(*a2a.Task).ID})
			if err != nil {
				t.Fatal(err)
			}
			if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 || task.Artifacts[0].Name != "answer" ||
				len(task.Artifacts[0].Parts) != 1 || task.Artifacts[0].Parts[0].Text() != "Hello from agentry." {
				t.Fatalf("stored task %s, artifacts %+v", task.Status.State, task.Artifacts)
			}
			if _, ok := task.Metadata[devtool.URI]; ok {
				t.Fatalf("stored task carries development-tool metadata: %v", task.Metadata)
			}
		})
	}
}

// TestPlainShapeFollowsTheTask: the request that starts a task decides its
// shape; an extension client's task streams the extension's updates and a
// plain client's the plain ones, on the same server. Blocking SendMessage
// returns the plain task with its answer.
func TestPlainShapeFollowsTheTask(t *testing.T) {
	h := newHarness(t, []string{textTurn("Hi.")})
	ext := collect(t, h.client("jsonrpc"), userMessage("hi", ""))
	if got := describe(ext); !strings.HasSuffix(got, "TEXT_CONTENT:working STATE_CHANGE:completed") {
		t.Fatalf("extension client: %s", got)
	}
	res, err := h.plainClient("jsonrpc").SendMessage(t.Context(), &a2a.SendMessageRequest{Message: userMessage("hi", "")})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 || task.Artifacts[0].Parts[0].Text() != "Hi." {
		t.Fatalf("blocking send: %+v", res)
	}
}

// TestPlainApprovalReplies: a call that needs approval parks a plain task
// input-required with a question naming the call; the documented plain
// replies answer it, in any case and with surrounding space. Anything
// else is refused with -32602 naming the accepted words, and the task
// keeps waiting.
func TestPlainApprovalReplies(t *testing.T) {
	cases := []struct {
		reply   string
		written bool
		want    string // the second stream
	}{
		{"yes", true, `status:working status:working["Running write_file: Writing to a.txt"] artifact+"\n\nDone."`},
		{"Y", true, `status:working status:working["Running write_file: Writing to a.txt"] artifact+"\n\nDone."`},
		{"  always\n", true, `status:working status:working["Running write_file: Writing to a.txt"] artifact+"\n\nDone."`},
		{"No", false, `status:working status:working["write_file was not run: User denied execution."] artifact+"\n\nDone."`},
		{"n", false, `status:working status:working["write_file was not run: User denied execution."] artifact+"\n\nDone."`},
	}
	for _, c := range cases {
		t.Run(strings.TrimSpace(c.reply), func(t *testing.T) {
			h := newHarness(t, []string{
				callTurn("I'll write it.", "write_file", map[string]any{"file_path": "a.txt", "content": "hi\n"}),
				textTurn("Done."),
			})
			cl := h.plainClient("jsonrpc")
			first := collect(t, cl, userMessage("write a.txt", ""))
			if got, want := describePlain(first), `Task(submitted) status:working artifact="I'll write it." status:input-required["Allow write_file? It would create `+filepath.Join(h.settings.Workspace, "a.txt")+`:"]`; got != want {
				t.Fatalf("first stream:\n got %s\nwant %s", got, want)
			}
			q := messageText(first[len(first)-1].(*a2a.TaskStatusUpdateEvent).Status.Message)
			for _, s := range []string{"+hi", "Reply yes to allow it once, always to allow file edits for the rest of the session, or no to decline."} {
				if !strings.Contains(q, s) {
					t.Errorf("question does not say %q:\n%s", s, q)
				}
			}
			noDevtool(t, first)
			task := first[0].(*a2a.Task)

			// A reply that is none of the words: refused, the task waits.
			_, err := cl.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: reply(task, "sure, go ahead")})
			if !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), "yes (or y)") || !strings.Contains(err.Error(), "write_file") {
				t.Fatalf("unknown reply: %v", err)
			}

			second := collect(t, cl, reply(task, c.reply))
			got := describePlain(second)
			if !strings.HasPrefix(got, c.want) || !strings.HasSuffix(got, `artifact+""! status:completed`) {
				t.Fatalf("second stream:\n got %s\nwant %s … artifact+\"\"! status:completed", got, c.want)
			}
			noDevtool(t, second)
			_, err = os.Stat(filepath.Join(h.settings.Workspace, "a.txt"))
			if (err == nil) != c.written {
				t.Fatalf("a.txt written: %v, want %v", err == nil, c.written)
			}
			stored, err := cl.GetTask(t.Context(), &a2a.GetTaskRequest{ID: task.ID})
			if err != nil {
				t.Fatal(err)
			}
			if a := stored.Artifacts; len(a) != 1 || a[0].Parts[0].Text() != "I'll write it.\n\nDone." {
				t.Fatalf("stored answer %+v", a)
			}
		})
	}
}

// TestPlainApprovalAlways: "always" allows the same kind of call for the
// rest of the conversation: the second write is not asked about.
func TestPlainApprovalAlways(t *testing.T) {
	h := newHarness(t, []string{
		callTurn("", "write_file", map[string]any{"file_path": "a.txt", "content": "a\n"}),
		callTurn("", "write_file", map[string]any{"file_path": "b.txt", "content": "b\n"}),
		textTurn("Both written."),
	})
	cl := h.plainClient("rest")
	first := collect(t, cl, userMessage("write two files", ""))
	if last := first[len(first)-1].(*a2a.TaskStatusUpdateEvent); last.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("first stream: %s", describePlain(first))
	}
	second := collect(t, cl, reply(first[0].(*a2a.Task), "always"))
	got := describePlain(second)
	if strings.Contains(got, "input-required") || !strings.Contains(got, "Running write_file: Writing to b.txt") || !strings.HasSuffix(got, "status:completed") {
		t.Fatalf("second stream: %s", got)
	}
	for _, f := range []string{"a.txt", "b.txt"} {
		if _, err := os.Stat(filepath.Join(h.settings.Workspace, f)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPlainShellQuestion: a shell command's question shows the command and
// where it runs.
func TestPlainShellQuestion(t *testing.T) {
	h := newHarness(t, []string{callTurn("", "run_shell_command", map[string]any{"command": "echo one; echo two"})})
	first := collect(t, h.plainClient("grpc"), userMessage("count", ""))
	q := messageText(first[len(first)-1].(*a2a.TaskStatusUpdateEvent).Status.Message)
	want := "Allow run_shell_command? It would run this command in " + h.settings.Workspace + ":\n\n    echo one; echo two\n\nReply yes to allow it once, always to allow commands starting with \"echo\" for the rest of the session, or no to decline.\n"
	if q != want {
		t.Fatalf("question:\n%s\nwant:\n%s", q, want)
	}
}

func plainApprovals(p protocol.PlainApprovals) harnessOption {
	return func(c *protocol.Config, _ *config.Settings) { c.PlainApprovals = p }
}

// TestPlainApprovalsPolicy: with plain approvals left to the policy, a
// plain task is never parked: what the policy does not allow is denied,
// as in a batch run, and what it allows (auto_edit) runs. A client with
// the extension is still asked.
func TestPlainApprovalsPolicy(t *testing.T) {
	t.Run("denied", func(t *testing.T) {
		h := newHarness(t, []string{
			callTurn("", "write_file", map[string]any{"file_path": "a.txt", "content": "hi\n"}),
			textTurn("I could not write it."),
		}, plainApprovals(protocol.PlainApprovalsPolicy))
		evs := collect(t, h.plainClient("jsonrpc"), userMessage("write a.txt", ""))
		got := describePlain(evs)
		// The model reads gemini-cli's sentence; the client, first, what
		// would allow the call.
		want := `Task(submitted) status:working status:working["Warning: write_file was refused: To allow it, run with --allowed-tools write_file or --approval-mode auto_edit, or add \"write_file\" to tools.allowed in settings.json."] ` +
			`status:working["write_file was not run: Tool execution for \"WriteFile\" requires user confirmation, which is not supported in non-interactive mode."] artifact="I could not write it." artifact+""! status:completed`
		if got != want {
			t.Fatalf("events:\n got %s\nwant %s", got, want)
		}
		if _, err := os.Stat(filepath.Join(h.settings.Workspace, "a.txt")); err == nil {
			t.Fatal("a.txt was written")
		}
	})
	t.Run("allowed", func(t *testing.T) {
		h := newHarness(t, []string{
			callTurn("", "write_file", map[string]any{"file_path": "a.txt", "content": "hi\n"}),
			textTurn("Written."),
		}, plainApprovals(protocol.PlainApprovalsPolicy), func(_ *protocol.Config, s *config.Settings) {
			s.General.DefaultApprovalMode = "auto_edit"
		})
		got := describePlain(collect(t, h.plainClient("jsonrpc"), userMessage("write a.txt", "")))
		if strings.Contains(got, "input-required") || !strings.HasSuffix(got, "status:completed") {
			t.Fatalf("events: %s", got)
		}
		if b, _ := os.ReadFile(filepath.Join(h.settings.Workspace, "a.txt")); string(b) != "hi\n" {
			t.Fatalf("a.txt = %q", b)
		}
	})
	t.Run("extension client asked", func(t *testing.T) {
		h := newHarness(t, []string{callTurn("", "write_file", map[string]any{"file_path": "a.txt", "content": "hi\n"})},
			plainApprovals(protocol.PlainApprovalsPolicy))
		if got := describe(collect(t, h.client("jsonrpc"), userMessage("write a.txt", ""))); !strings.HasSuffix(got, "STATE_CHANGE:input-required") {
			t.Fatalf("events: %s", got)
		}
	})
}

func requireExtension(c *protocol.Config, _ *config.Settings) { c.RequireExtension = true }

// TestRequireExtension: the extension is optional unless the server
// requires it; then the card marks it required and a message without it
// is refused with -32008 on every binding, while reads (get, list,
// cancel, push configs) are served.
func TestRequireExtension(t *testing.T) {
	if ext := newHarness(t, nil).srv.Card().Capabilities.Extensions; len(ext) != 1 || ext[0].URI != devtool.URI || ext[0].Required {
		t.Fatalf("default card extensions %+v", ext)
	}
	h := newHarness(t, []string{textTurn("Hi.")}, requireExtension)
	if ext := h.srv.Card().Capabilities.Extensions; len(ext) != 1 || !ext[0].Required {
		t.Fatalf("card extensions %+v", ext)
	}
	task := collect(t, h.client("jsonrpc"), userMessage("hi", ""))[0].(*a2a.Task)
	for _, binding := range []string{"jsonrpc", "rest", "grpc", "v0.3"} {
		t.Run(binding, func(t *testing.T) {
			c := h.plainClient(binding)
			for ev, err := range c.SendStreamingMessage(t.Context(), &a2a.SendMessageRequest{Message: userMessage("hi", "")}) {
				if ev != nil {
					t.Fatalf("a stream without the extension got %T", ev)
				}
				// a2a-go's JSON-RPC client reads only the HTTP status of a
				// refused stream; the others get the error itself.
				if binding == "jsonrpc" || binding == "v0.3" {
					if err == nil || !strings.Contains(err.Error(), "400") {
						t.Fatalf("stream: %v", err)
					}
				} else if !errors.Is(err, a2a.ErrExtensionSupportRequired) {
					t.Fatalf("stream: %v", err)
				}
			}
			_, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: userMessage("hi", "")})
			if !errors.Is(err, a2a.ErrExtensionSupportRequired) || !strings.Contains(err.Error(), devtool.URI) {
				t.Fatalf("send: %v", err)
			}
			if got, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: task.ID}); err != nil || got.ID != task.ID {
				t.Fatalf("get: %v", err)
			}
			if binding != "v0.3" {
				if _, err := c.ListTasks(t.Context(), &a2a.ListTasksRequest{}); err != nil {
					t.Fatalf("list: %v", err)
				}
			}
			if cfgs, err := c.ListTaskPushConfigs(t.Context(), &a2a.ListTaskPushConfigRequest{TaskID: task.ID}); err != nil || len(cfgs) != 0 {
				t.Fatalf("push configs: %v %v", cfgs, err)
			}
			if _, err := c.CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
				t.Fatalf("cancel of a finished task: %v", err)
			}
		})
	}
}

// TestStreamRefusals: a streaming request refused before its first event
// is an HTTP error on every binding, never a 200 stream: JSON-RPC (1.0 and
// 0.3) answers with the error's HTTP status and the JSON-RPC error as a
// JSON body, REST with the status and A2A's REST error body, gRPC with
// the gRPC status.
func TestStreamRefusals(t *testing.T) {
	h := newHarness(t, nil, requireExtension)
	unknown := func(method string) string {
		if strings.Contains(method, "/") {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":"r1","method":%q,"params":{"message":{"kind":"message","messageId":"m1","role":"user","taskId":"nope","parts":[{"kind":"text","text":"hi"}]}}}`, method)
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":"r1","method":%q,"params":{"message":{"messageId":"m1","role":"ROLE_USER","taskId":"nope","parts":[{"text":"hi"}]}}}`, method)
	}
	cases := []struct {
		name, method, path, body string
		noExtension              bool
		status                   int
		rpcCode                  int
		restStatus               string
	}{
		{name: "1.0 stream to an unknown task", body: unknown("SendStreamingMessage"), status: 404, rpcCode: -32001},
		{name: "0.3 stream to an unknown task", body: unknown("message/stream"), status: 404, rpcCode: -32001},
		{name: "1.0 subscribe to an unknown task", body: `{"jsonrpc":"2.0","id":2,"method":"SubscribeToTask","params":{"id":"nope"}}`, status: 404, rpcCode: -32001},
		{name: "0.3 resubscribe to an unknown task", body: `{"jsonrpc":"2.0","id":2,"method":"tasks/resubscribe","params":{"id":"nope"}}`, status: 404, rpcCode: -32001},
		{name: "1.0 stream with params of the wrong type", body: `{"jsonrpc":"2.0","id":3,"method":"SendStreamingMessage","params":{"message":5}}`, status: 400, rpcCode: -32602},
		{name: "1.0 stream without the required extension", body: `{"jsonrpc":"2.0","id":4,"method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`, noExtension: true, status: 400, rpcCode: -32008},
		{name: "0.3 stream without the required extension", body: unknown("message/stream"), noExtension: true, status: 400, rpcCode: -32008},
		{name: "REST stream to an unknown task", method: "POST", path: "/rest/message:stream", body: `{"message":{"messageId":"m1","role":"ROLE_USER","taskId":"nope","parts":[{"text":"hi"}]}}`, status: 404, restStatus: "NOT_FOUND"},
		{name: "REST subscribe to an unknown task", method: "GET", path: "/rest/tasks/nope:subscribe", status: 404, restStatus: "NOT_FOUND"},
		{name: "REST stream without the required extension", method: "POST", path: "/rest/message:stream", body: `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, noExtension: true, status: 400, restStatus: "FAILED_PRECONDITION"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			method, path := c.method, c.path
			if method == "" {
				method, path = "POST", "/"
			}
			req, err := http.NewRequestWithContext(t.Context(), method, h.url+path, strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Authorization", "Bearer "+testToken)
			if !c.noExtension {
				req.Header.Set("A2A-Extensions", devtool.URI)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("HTTP %d %s, want %d application/json; body %s", resp.StatusCode, resp.Header.Get("Content-Type"), c.status, b)
			}
			if c.rpcCode != 0 {
				var r struct {
					JSONRPC string `json:"jsonrpc"`
					ID      any    `json:"id"`
					Error   *struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(b, &r); err != nil || r.JSONRPC != "2.0" || r.Error == nil || r.Error.Code != c.rpcCode || r.Error.Message == "" {
					t.Fatalf("body %s, want a JSON-RPC error %d", b, c.rpcCode)
				}
				return
			}
			var r struct {
				Error *struct {
					Code    int    `json:"code"`
					Status  string `json:"status"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(b, &r); err != nil || r.Error == nil || r.Error.Code != c.status || r.Error.Status != c.restStatus || r.Error.Message == "" {
				t.Fatalf("body %s, want a REST error %d %s", b, c.status, c.restStatus)
			}
		})
	}
	t.Run("gRPC stream to an unknown task", func(t *testing.T) {
		conn, err := grpc.NewClient(strings.TrimPrefix(h.url, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ctx := metadata.AppendToOutgoingContext(withToken(t.Context()), "a2a-extensions", devtool.URI)
		stream, err := a2apb.NewA2AServiceClient(conn).SendStreamingMessage(ctx, &a2apb.SendMessageRequest{Message: &a2apb.Message{
			MessageId: "m1", Role: a2apb.Role_ROLE_USER, TaskId: "nope", Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hi"}}}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Recv(); status.Code(err) != codes.NotFound {
			t.Fatalf("first receive: %v, want NotFound", err)
		}
	})
}

// TestPlainResubscribe: a task keeps the shape of the request that
// started it: a client that resubscribes to a running plain task (here
// one that activates the extension, over REST) gets its current state and
// the rest of its plain events, the answer's last chunk and completed.
func TestPlainResubscribe(t *testing.T) {
	h := newHarness(t, []string{
		callTurn("", "run_shell_command", map[string]any{"command": "while [ ! -f go ]; do sleep 0.05; done; echo went"}),
		textTurn("It went."),
	}, yolo, onDisconnect(protocol.DisconnectContinue))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var task *a2a.Task
	for ev, err := range h.plainClient("jsonrpc").SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: userMessage("wait", "")}) {
		if err != nil {
			t.Fatal(err)
		}
		if tk, ok := ev.(*a2a.Task); ok {
			task = tk
		}
		if u, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && u.Status.Message != nil && strings.HasPrefix(messageText(u.Status.Message), "Running run_shell_command") {
			break
		}
	}
	if task == nil {
		t.Fatal("no task")
	}
	// The command waits for the file "go": the task runs until the
	// subscription has its first event.
	next, stop := iter.Pull2(h.client("rest").SubscribeToTask(t.Context(), &a2a.SubscribeToTaskRequest{ID: task.ID}))
	defer stop()
	var evs []a2a.Event
	for {
		ev, err, ok := next()
		if !ok {
			break
		}
		if err != nil {
			t.Fatalf("subscribe: %v (after %s)", err, describePlain(evs))
		}
		evs = append(evs, ev)
		if len(evs) == 1 {
			if err := os.WriteFile(filepath.Join(h.settings.Workspace, "go"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := describePlain(evs); got != `Task(working) artifact="It went." artifact+""! status:completed` {
		t.Fatalf("resubscribed: %s", got)
	}
	noDevtool(t, evs)
}
