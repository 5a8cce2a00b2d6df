package protocol_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/agentry-dev/agentry/protocol/devtool"
)

// raw sends one HTTP request with the token (unless the headers set
// Authorization to "-") and returns the status and body.
func (h *harness) raw(method, path, body string, headers map[string]string) (int, string) {
	h.t.Helper()
	req, err := http.NewRequestWithContext(h.t.Context(), method, h.url+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("A2A-Extensions", devtool.URI)
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		if v == "-" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// rpcError extracts a JSON-RPC error's code and message from a body (the
// last SSE event's, for a stream).
func rpcError(body string) (int, string) {
	if i := strings.LastIndex(body, "data:"); i >= 0 {
		body = strings.TrimSpace(body[i+5:])
	}
	var r struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(body), &r) != nil || r.Error == nil {
		return 0, ""
	}
	return r.Error.Code, r.Error.Message
}

// TestBadInput: each malformed or unauthorised request gets the error
// its binding defines, with a message that names the problem.
func TestBadInput(t *testing.T) {
	h := newHarness(t, []string{
		callTurn("", "write_file", map[string]any{"file_path": "a.txt", "content": "x"}),
		textTurn("ok"),
	})
	// A task parked on a confirmation, for the confirmation cases.
	first := collect(t, h.client("jsonrpc"), userMessage("write a.txt", ""))
	task := first[0].(*a2a.Task)
	callID := toolCallOf(first[len(first)-2].(*a2a.TaskStatusUpdateEvent)).ToolCallID
	outside := t.TempDir()
	confirmation := func(taskID, call string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"c1","role":"ROLE_USER","taskId":%q,"contextId":%q,"parts":[{"data":{"tool_call_id":%q,"selected_option_id":"proceed_once"}}]}}}`,
			taskID, task.ContextID, call)
	}
	send := func(meta string) string {
		return `{"jsonrpc":"2.0","id":3,"method":"SendMessage","params":{"message":{"messageId":"b1","role":"ROLE_USER","parts":[{"text":"hi"}]` + meta + `}}}`
	}
	cases := []struct {
		name     string
		method   string
		path     string
		body     string
		headers  map[string]string
		status   int
		rpcCode  int
		contains string
	}{
		{name: "malformed JSON-RPC", body: `{"jsonrpc":"2.0","id":1,"method":`, status: 200, rpcCode: -32700},
		{name: "unknown method", body: `{"jsonrpc":"2.0","id":1,"method":"tasks/teleport","params":{}}`, status: 200, rpcCode: -32601},
		{name: "unknown 1.0 method", body: `{"jsonrpc":"2.0","id":1,"method":"Teleport","params":{}}`, status: 200, rpcCode: -32601},
		{name: "wrong param types", body: `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":5}}`, status: 200, rpcCode: -32602},
		{name: "command params not an object", body: `{"jsonrpc":"2.0","id":1,"method":"command/execute","params":[1]}`, status: 200, rpcCode: -32602, contains: "command_path"},
		{name: "oversized body", body: `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"x":"` + strings.Repeat("a", 2<<20) + `"}}`, status: 413},
		{name: "missing token", body: `{}`, headers: map[string]string{"Authorization": "-"}, status: 401},
		{name: "wrong token", body: `{}`, headers: map[string]string{"Authorization": "Bearer nope"}, status: 401},
		{name: "foreign Host (DNS rebinding)", body: `{}`, headers: map[string]string{"Host": "evil.example:80"}, status: 403, contains: "evil.example"},
		{name: "foreign Origin", body: `{}`, headers: map[string]string{"Origin": "https://evil.example"}, status: 403, contains: "evil.example"},
		{name: "card with foreign Origin", method: "GET", path: "/.well-known/agent-card.json", headers: map[string]string{"Origin": "https://evil.example", "Authorization": "-"}, status: 403},
		{name: "confirmation for an unknown tool call", body: confirmation(string(task.ID), "no-such-call"), status: 200, rpcCode: -32602, contains: "no-such-call"},
		{name: "confirmation without the task", body: `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"c2","role":"ROLE_USER","parts":[{"data":{"tool_call_id":"x","selected_option_id":"proceed_once"}}]}}}`, status: 200, rpcCode: -32602, contains: "taskId"},
		{name: "bad option", body: strings.Replace(confirmation(string(task.ID), callID), "proceed_once", "maybe", 1), status: 200, rpcCode: -32602, contains: "maybe"},
		{name: "text to a task waiting for a confirmation", body: fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"c3","role":"ROLE_USER","taskId":%q,"parts":[{"text":"go ahead"}]}}}`, task.ID), status: 200, rpcCode: -32602, contains: callID},
		{name: "new task in a context waiting for a confirmation", body: fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"c4","role":"ROLE_USER","contextId":%q,"parts":[{"text":"hi"}]}}}`, task.ContextID), status: 200, rpcCode: -32600, contains: "waiting for a confirmation"},
		{name: "workspace outside the allowed roots", body: send(fmt.Sprintf(`,"metadata":{%q:{"workspace_path":%q}}`, devtool.URI, outside)), status: 200, rpcCode: -32602, contains: "outside"},
		{name: "context id that is a path", body: `{"jsonrpc":"2.0","id":3,"method":"SendMessage","params":{"message":{"messageId":"b2","role":"ROLE_USER","contextId":"../../etc","parts":[{"text":"hi"}]}}}`, status: 200, rpcCode: -32602, contains: "contextId"},
		{name: "relative workspace", body: send(fmt.Sprintf(`,"metadata":{%q:{"workspace_path":"src"}}`, devtool.URI)), status: 200, rpcCode: -32602, contains: "absolute"},
		{name: "incompatible extension version", body: send(""), headers: map[string]string{"A2A-Extensions": strings.Replace(devtool.URI, "/v0/", "/v1/", 1)}, status: 200, contains: "not compatible"},
		{name: "read without the extension", body: `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}}`, headers: map[string]string{"A2A-Extensions": "-"}, status: 200, rpcCode: -32001},
		{name: "compatible extension version spelled out", body: `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}}`, headers: map[string]string{"A2A-Extensions": strings.Replace(devtool.URI, "/v0/", "/v0.1.0/", 1)}, status: 200, rpcCode: -32001},
		{name: "REST without token", method: "GET", path: "/rest/tasks/" + string(task.ID), headers: map[string]string{"Authorization": "-"}, status: 401},
		{name: "REST unknown task", method: "GET", path: "/rest/tasks/nope", status: 404},
		{name: "no such endpoint", method: "GET", path: "/admin", status: 404, contains: "agent card"},
		{name: "GET on the JSON-RPC endpoint", method: "GET", path: "/", status: 405},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			method, path := c.method, c.path
			if method == "" {
				method = "POST"
			}
			if path == "" {
				path = "/"
			}
			code, body := h.raw(method, path, c.body, c.headers)
			if code != c.status {
				t.Fatalf("status %d, want %d; body %.300s", code, c.status, body)
			}
			rc, msg := rpcError(body)
			if c.rpcCode != 0 && rc != c.rpcCode {
				t.Fatalf("JSON-RPC code %d, want %d; body %.300s", rc, c.rpcCode, body)
			}
			if c.contains != "" && !strings.Contains(body, c.contains) {
				t.Fatalf("body does not mention %q: %.400s (message %q)", c.contains, body, msg)
			}
		})
	}
	// The parked task survived every bad confirmation: the real one
	// resumes it.
	second := collect(t, h.client("jsonrpc"), confirm(task, callID, "proceed_once"))
	if got := describe(second); !strings.HasSuffix(got, "STATE_CHANGE:completed") {
		t.Fatalf("after the bad input, the confirmation gave %s", got)
	}
	// A repeated confirmation is named as a duplicate.
	_, body := h.raw("POST", "/", confirmation(string(task.ID), callID), nil)
	if _, msg := rpcError(body); !strings.Contains(msg, "takes no more messages") && !strings.Contains(msg, "already answered") {
		t.Fatalf("duplicate confirmation: %s", body)
	}
}

// TestBadInputGRPC: over gRPC, a missing token is Unauthenticated and a
// confirmation for an unknown tool call InvalidArgument.
func TestBadInputGRPC(t *testing.T) {
	h := newHarness(t, []string{callTurn("", "write_file", map[string]any{"file_path": "a.txt", "content": "x"})})
	first := collect(t, h.client("grpc"), userMessage("write", ""))
	task := first[0].(*a2a.Task)
	conn, err := grpc.NewClient(strings.TrimPrefix(h.url, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := a2apb.NewA2AServiceClient(conn)
	_, err = c.GetTask(t.Context(), &a2apb.GetTaskRequest{Id: string(task.ID)})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("no token: %v", err)
	}
	ctx := metadata.AppendToOutgoingContext(withToken(t.Context()), "a2a-extensions", devtool.URI)
	req := &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "x", Role: a2apb.Role_ROLE_USER, TaskId: string(task.ID), ContextId: task.ContextID,
		Parts: []*a2apb.Part{{Content: &a2apb.Part_Data{Data: structValue(t, map[string]any{"tool_call_id": "nope", "selected_option_id": "cancel"})}}}}}
	_, err = c.SendMessage(ctx, req)
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("unknown tool call: %v", err)
	}
}

func withToken(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+testToken)
}

func structValue(t *testing.T, m map[string]any) *structpb.Value {
	t.Helper()
	v, err := structpb.NewValue(m)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
