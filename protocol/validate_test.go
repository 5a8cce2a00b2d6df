package protocol_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/protocol"
	"github.com/agentry-dev/agentry/protocol/devtool"
)

// restError is an error in A2A's REST shape (google.rpc.Status).
type restError struct {
	Code    int    `json:"code"`
	Status  string `json:"status"`
	Message string `json:"message"`
	Details []struct {
		Type   string `json:"@type"`
		Reason string `json:"reason"`
	} `json:"details"`
}

// restErrorOf parses a REST error body.
func restErrorOf(t *testing.T, body string) restError {
	t.Helper()
	var r struct {
		Error *restError `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.Error == nil {
		t.Fatalf("not an A2A REST error (%v): %s", err, body)
	}
	return *r.Error
}

func (e restError) reason() string {
	for _, d := range e.Details {
		if strings.HasSuffix(d.Type, "google.rpc.ErrorInfo") {
			return d.Reason
		}
	}
	return ""
}

// grpcClient is a raw gRPC client with the token and the extension.
func (h *harness) grpcClient() (a2apb.A2AServiceClient, context.Context) {
	h.t.Helper()
	conn, err := grpc.NewClient(strings.TrimPrefix(h.url, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = conn.Close() })
	ctx := metadata.AppendToOutgoingContext(withToken(h.t.Context()), "a2a-extensions", devtool.URI)
	return a2apb.NewA2AServiceClient(conn), ctx
}

// grpcReason is the A2A ErrorInfo reason of a gRPC error.
func grpcReason(err error) string {
	st, _ := status.FromError(err)
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info.Reason
		}
	}
	return ""
}

// wantRPC checks a JSON-RPC error's code and that its message names want.
func wantRPC(t *testing.T, body string, code int, want string) {
	t.Helper()
	got, msg := rpcError(body)
	if got != code || !strings.Contains(msg, want) {
		t.Errorf("JSON-RPC error %d %q, want %d naming %q; body %.400s", got, msg, code, want, body)
	}
}

// wantREST checks a REST error's HTTP status, reason and message.
func wantREST(t *testing.T, status int, body string, wantStatus int, reason, want string) {
	t.Helper()
	if status != wantStatus {
		t.Errorf("HTTP %d, want %d; body %.400s", status, wantStatus, body)
		return
	}
	e := restErrorOf(t, body)
	if e.Code != wantStatus || e.reason() != reason || !strings.Contains(e.Message, want) {
		t.Errorf("REST error %d %s %q, want %d %s naming %q", e.Code, e.reason(), e.Message, wantStatus, reason, want)
	}
}

// wantGRPC checks a gRPC error's code, reason and message.
func wantGRPC(t *testing.T, err error, code codes.Code, reason, want string) {
	t.Helper()
	if status.Code(err) != code || grpcReason(err) != reason || !strings.Contains(status.Convert(err).Message(), want) {
		t.Errorf("gRPC error %v (reason %s), want %s %s naming %q", err, grpcReason(err), code, reason, want)
	}
}

func ptr[T any](v T) *T { return &v }

// TestSendMessageInvalidParams: a message without parts, with an empty
// part list, a part without content, without a messageId or without a
// role is refused as invalid params (-32602; REST 400 INVALID_PARAMS;
// gRPC InvalidArgument) on every binding, naming the field, and no task
// or session is started for it.
// Mirrors the A2A TCK's test_message_send_invalid_params
// (tests/mandatory/protocol/test_message_send_method.py) and
// test_rejects_invalid_params (tests/mandatory/jsonrpc).
func TestSendMessageInvalidParams(t *testing.T) {
	h := newHarness(t, []string{textTurn("never")})
	cases := []struct {
		name, message, legacy, field string
		pb                           *a2apb.Message
	}{
		{name: "no parts", message: `{"messageId":"m1","role":"ROLE_USER"}`, legacy: `{"kind":"message","messageId":"m1","role":"user"}`, field: "parts",
			pb: &a2apb.Message{MessageId: "m1", Role: a2apb.Role_ROLE_USER}},
		{name: "empty parts", message: `{"messageId":"m1","role":"ROLE_USER","parts":[]}`, legacy: `{"kind":"message","messageId":"m1","role":"user","parts":[]}`, field: "parts",
			pb: &a2apb.Message{MessageId: "m1", Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{}}},
		{name: "part without content", message: `{"messageId":"m1","role":"ROLE_USER","parts":[{}]}`, field: "parts"},
		{name: "no messageId", message: `{"role":"ROLE_USER","parts":[{"text":"hi"}]}`, legacy: `{"kind":"message","role":"user","parts":[{"kind":"text","text":"hi"}]}`, field: "messageId",
			pb: &a2apb.Message{Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hi"}}}}},
		{name: "no role", message: `{"messageId":"m1","parts":[{"text":"hi"}]}`, field: "role",
			pb: &a2apb.Message{MessageId: "m1", Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hi"}}}}},
		{name: "unknown role", message: `{"messageId":"m1","role":"ROLE_ROBOT","parts":[{"text":"hi"}]}`, field: "role"},
		// The TCK's own invalid message.
		{name: "TCK kind only", message: `{"kind":"message"}`, field: "message"},
	}
	grpcClient, gctx := h.grpcClient()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, method := range []string{"SendMessage", "SendStreamingMessage"} {
				_, body := h.raw("POST", "/", fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{"message":%s}}`, method, c.message), nil)
				wantRPC(t, body, -32602, c.field)
			}
			if c.name == "part without content" {
				// Refused before any stream starts: an HTTP error.
				code, body := h.raw("POST", "/", `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":`+c.message+`}}`, nil)
				if code != http.StatusBadRequest {
					t.Errorf("stream refused before it started: HTTP %d, want 400; %s", code, body)
				}
			}
			if c.legacy != "" {
				_, body := h.raw("POST", "/", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":`+c.legacy+`}}`, nil)
				wantRPC(t, body, -32602, c.field)
			}
			code, body := h.raw("POST", "/rest/message:send", `{"message":`+c.message+`}`, nil)
			if c.name == "part without content" {
				// a2a-go's REST binding cannot decode it: a parse error,
				// still HTTP 400.
				if code != http.StatusBadRequest {
					t.Errorf("REST: HTTP %d %s", code, body)
				}
			} else {
				wantREST(t, code, body, http.StatusBadRequest, "INVALID_PARAMS", c.field)
			}
			if c.pb != nil {
				_, err := grpcClient.SendMessage(gctx, &a2apb.SendMessageRequest{Message: c.pb})
				if status.Code(err) != codes.InvalidArgument || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(c.field[:4])) {
					t.Errorf("gRPC: %v, want InvalidArgument naming %s", err, c.field)
				}
			}
		})
	}
	if n := h.sessions.Load(); n != 0 {
		t.Errorf("%d sessions were started for invalid messages", n)
	}
	list, err := h.client("jsonrpc").ListTasks(t.Context(), &a2a.ListTasksRequest{})
	if err != nil || list.TotalSize != 0 {
		t.Errorf("invalid messages created tasks: %v %+v", err, list)
	}
}

// TestListTasksInvalidParams: ListTasks refuses a malformed page token, a
// page size of 0, below 0 or over 100, a status that is no task state, a
// timestamp that is not RFC 3339 and a negative historyLength as invalid
// params on every binding, naming the parameter; GetTask a negative
// historyLength. Each case mirrors the A2A TCK test named in it
// (tests/mandatory/protocol/test_tasks_list_method.py, TestEdgeCasesAndErrors).
func TestListTasksInvalidParams(t *testing.T) {
	h := newHarness(t, []string{textTurn("Done.")})
	task := collect(t, h.client("jsonrpc"), userMessage("hi", ""))[0].(*a2a.Task)
	grpcClient, gctx := h.grpcClient()
	cases := []struct {
		tck    string
		params string     // JSON-RPC params
		query  url.Values // REST query
		pb     *a2apb.ListTasksRequest
		field  string
	}{
		{tck: "test_invalid_page_token_error", params: `{"pageToken":"invalid-token-xyz"}`, query: url.Values{"pageToken": {"invalid-token-xyz"}},
			pb: &a2apb.ListTasksRequest{PageToken: "invalid-token-xyz"}, field: "pageToken"},
		// Over gRPC a2a-go's client sends page_size 0 for "not set", so
		// there 0 means the default.
		{tck: "test_zero_page_size_error", params: `{"pageSize":0}`, query: url.Values{"pageSize": {"0"}}, field: "pageSize"},
		{tck: "test_negative_page_size_error", params: `{"pageSize":-1}`, query: url.Values{"pageSize": {"-1"}},
			pb: &a2apb.ListTasksRequest{PageSize: ptr[int32](-1)}, field: "pageSize"},
		{tck: "test_out_of_range_page_size_error", params: `{"pageSize":101}`, query: url.Values{"pageSize": {"101"}},
			pb: &a2apb.ListTasksRequest{PageSize: ptr[int32](101)}, field: "pageSize"},
		{tck: "test_invalid_status_error", params: `{"status":"INVALID_STATUS"}`, query: url.Values{"status": {"INVALID_STATUS"}},
			pb: &a2apb.ListTasksRequest{Status: a2apb.TaskState(42)}, field: "status"},
		{tck: "test_invalid_timestamp_error", params: `{"statusTimestampAfter":"-1"}`, query: url.Values{"statusTimestampAfter": {"-1"}}, field: "statusTimestampAfter"},
		{tck: "test_invalid_timestamp_error (a number)", params: `{"statusTimestampAfter":-1}`, field: "statusTimestampAfter"},
		{tck: "test_negative_history_length_error", params: `{"historyLength":-1}`, query: url.Values{"historyLength": {"-1"}},
			pb: &a2apb.ListTasksRequest{HistoryLength: ptr[int32](-1)}, field: "historyLength"},
		{tck: "pageSize not a number", params: `{"pageSize":"ten"}`, query: url.Values{"pageSize": {"ten"}}, field: "pageSize"},
	}
	for _, c := range cases {
		t.Run(c.tck, func(t *testing.T) {
			_, body := h.raw("POST", "/", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":`+c.params+`}`, nil)
			wantRPC(t, body, -32602, c.field)
			if c.query != nil {
				code, body := h.raw("GET", "/rest/tasks?"+c.query.Encode(), "", nil)
				wantREST(t, code, body, http.StatusBadRequest, "INVALID_PARAMS", c.field)
			}
			if c.pb != nil {
				_, err := grpcClient.ListTasks(gctx, c.pb)
				wantGRPC(t, err, codes.InvalidArgument, "INVALID_PARAMS", c.field)
			}
		})
	}
	// The limits themselves are fine.
	for _, params := range []string{`{"pageSize":1}`, `{"pageSize":100}`, `{"historyLength":0}`, `{"status":"TASK_STATE_COMPLETED"}`, `{"statusTimestampAfter":"2020-01-02T15:04:05Z"}`} {
		_, body := h.raw("POST", "/", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":`+params+`}`, nil)
		if code, msg := rpcError(body); code != 0 || !strings.Contains(body, string(task.ID)) {
			t.Errorf("ListTasks %s: %d %s; body %.300s", params, code, msg, body)
		}
	}
	// A page token this server issued still works.
	_, body := h.raw("POST", "/", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":1}}`, nil)
	if code, _ := rpcError(body); code != 0 {
		t.Fatalf("first page: %s", body)
	}

	t.Run("GetTask negative historyLength", func(t *testing.T) {
		_, body := h.raw("POST", "/", fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":%q,"historyLength":-1}}`, task.ID), nil)
		wantRPC(t, body, -32602, "historyLength")
		_, body = h.raw("POST", "/", fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":%q,"historyLength":-1}}`, task.ID), nil)
		wantRPC(t, body, -32602, "historyLength")
		code, body := h.raw("GET", "/rest/tasks/"+string(task.ID)+"?historyLength=-1", "", nil)
		wantREST(t, code, body, http.StatusBadRequest, "INVALID_PARAMS", "historyLength")
		_, err := grpcClient.GetTask(gctx, &a2apb.GetTaskRequest{Id: string(task.ID), HistoryLength: ptr[int32](-1)})
		wantGRPC(t, err, codes.InvalidArgument, "INVALID_PARAMS", "historyLength")
	})
}

// TestListTasksPageToken: the next page token a response carries reads
// the next page on every binding (the token stays the store's, opaque).
func TestListTasksPageToken(t *testing.T) {
	h := newHarness(t, []string{textTurn("One."), textTurn("Two.")})
	collect(t, h.client("jsonrpc"), userMessage("one", ""))
	collect(t, h.client("jsonrpc"), userMessage("two", ""))
	for _, binding := range []string{"jsonrpc", "rest", "grpc"} {
		c := h.client(binding)
		first, err := c.ListTasks(t.Context(), &a2a.ListTasksRequest{PageSize: 1})
		if err != nil || len(first.Tasks) != 1 || first.NextPageToken == "" {
			t.Fatalf("%s: first page %+v %v", binding, first, err)
		}
		second, err := c.ListTasks(t.Context(), &a2a.ListTasksRequest{PageSize: 1, PageToken: first.NextPageToken})
		if err != nil || len(second.Tasks) != 1 || second.Tasks[0].ID == first.Tasks[0].ID {
			t.Fatalf("%s: second page %+v %v", binding, second, err)
		}
	}
}

// TestFinishedTask: a message to a completed task is an unsupported
// operation on every binding (-32004; REST 400 UNSUPPORTED_OPERATION;
// gRPC as a2a-go maps it), saying to start a new task in the context; a
// cancel of it is TASK_NOT_CANCELABLE, over REST 409 Conflict.
// Mirrors the A2A TCK's CORE-SEND-002 ("SendMessage rejects messages to
// terminal tasks") and test_task_not_cancelable_returns_409
// (tests/compatibility/http_json/test_http_status.py).
func TestFinishedTask(t *testing.T) {
	h := newHarness(t, []string{textTurn("Done.")})
	task := collect(t, h.client("jsonrpc"), userMessage("hi", ""))[0].(*a2a.Task)
	follow := func(method string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{"message":{"messageId":"f1","role":"ROLE_USER","taskId":%q,"contextId":%q,"parts":[{"text":"and then?"}]}}}`,
			method, task.ID, task.ContextID)
	}
	for _, method := range []string{"SendMessage", "SendStreamingMessage"} {
		_, body := h.raw("POST", "/", follow(method), nil)
		wantRPC(t, body, -32004, task.ContextID)
	}
	_, body := h.raw("POST", "/", fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"f2","role":"user","taskId":%q,"contextId":%q,"parts":[{"kind":"text","text":"and then?"}]}}}`,
		task.ID, task.ContextID), nil)
	wantRPC(t, body, -32004, "new task")
	code, body := h.raw("POST", "/rest/message:send", fmt.Sprintf(`{"message":{"messageId":"f3","role":"ROLE_USER","taskId":%q,"parts":[{"text":"and then?"}]}}`, task.ID), nil)
	wantREST(t, code, body, http.StatusBadRequest, "UNSUPPORTED_OPERATION", "new task")
	grpcClient, gctx := h.grpcClient()
	_, err := grpcClient.SendMessage(gctx, &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "f4", Role: a2apb.Role_ROLE_USER, TaskId: string(task.ID),
		Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "and then?"}}}}})
	wantGRPC(t, err, codes.FailedPrecondition, "UNSUPPORTED_OPERATION", "new task")

	_, body = h.raw("POST", "/", fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":%q}}`, task.ID), nil)
	wantRPC(t, body, -32002, "completed")
	code, body = h.raw("POST", "/rest/tasks/"+string(task.ID)+":cancel", "{}", nil)
	wantREST(t, code, body, http.StatusConflict, "TASK_NOT_CANCELABLE", "completed")
	_, err = grpcClient.CancelTask(gctx, &a2apb.CancelTaskRequest{Id: string(task.ID)})
	wantGRPC(t, err, codes.FailedPrecondition, "TASK_NOT_CANCELABLE", "completed")
	// a2a-go's REST client still reads the 409 as the A2A error.
	if _, err := h.client("rest").CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
		t.Errorf("a2a-go REST client: %v, want task not cancelable", err)
	}
	// Other REST errors keep their status.
	code, _ = h.raw("POST", "/rest/tasks/no-such-task:cancel", "{}", nil)
	if code != http.StatusNotFound {
		t.Errorf("cancel of an unknown task: HTTP %d, want 404", code)
	}
}

// TestJSONRPCBatch: a JSON-RPC batch (an array) is an invalid request
// (-32600, id null), not a parse error; nothing in it runs.
// Mirrors the batch case of the A2A TCK's test_jsonrpc_specific_features
// (tests/mandatory/protocol/test_a2a_v030_new_methods.py).
func TestJSONRPCBatch(t *testing.T) {
	h := newHarness(t, []string{textTurn("never")})
	for _, body := range []string{
		`[{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"b1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}]`,
		` [ ]`,
	} {
		status, resp := h.raw("POST", "/", body, nil)
		wantRPC(t, resp, -32600, "batch")
		var env struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal([]byte(resp), &env)
		if status != http.StatusOK || string(env.ID) != "null" {
			t.Errorf("batch %s: HTTP %d, id %s", body, status, env.ID)
		}
	}
	if n := h.sessions.Load(); n != 0 {
		t.Errorf("a batch started %d sessions", n)
	}
}

// TestPushConfigPrivateAddress: a push config whose webhook is on this
// machine, a private network or a link-local address is refused when it
// is created (CreateTaskPushNotificationConfig on every binding, or a
// message's configuration), naming the setting that allows it; with
// AllowPrivatePush it is accepted. A public https URL is accepted.
func TestPushConfigPrivateAddress(t *testing.T) {
	h := newHarness(t, []string{callTurn("", "write_file", map[string]any{"file_path": "a.txt", "content": "x"})})
	parked := collect(t, h.client("jsonrpc"), userMessage("write", ""))[0].(*a2a.Task)
	grpcClient, gctx := h.grpcClient()
	for _, hook := range []string{
		"http://127.0.0.1:8080/hook", "http://localhost:8080/hook", "http://api.localhost/hook", "http://[::1]:9/hook",
		"http://10.1.2.3/hook", "https://192.168.0.10/hook", "http://172.16.0.1/hook", "http://169.254.169.254/latest",
		"http://[fe80::1]/hook", "http://0.0.0.0:80/", "http://[::ffff:127.0.0.1]/hook",
		"http://100.64.0.1/hook", "http://198.18.0.1/hook", "http://198.19.255.254/hook", "http://192.0.2.1/hook",
		"http://240.0.0.1/hook", "http://[64:ff9b::a00:1]/hook", "http://[2001:db8::1]/hook", "http://[fd00::1]/hook",
		"http://[2002:a00:1::]/hook",
	} {
		t.Run(hook, func(t *testing.T) {
			_, body := h.raw("POST", "/", fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":{"taskId":%q,"url":%q}}`, parked.ID, hook), nil)
			wantRPC(t, body, -32602, "--allow-private-push")
			code, body := h.raw("POST", "/rest/tasks/"+string(parked.ID)+"/pushNotificationConfigs", fmt.Sprintf(`{"url":%q}`, hook), nil)
			wantREST(t, code, body, http.StatusBadRequest, "INVALID_PARAMS", "security.a2a.allowPrivatePush")
			_, err := grpcClient.CreateTaskPushNotificationConfig(gctx, &a2apb.TaskPushNotificationConfig{TaskId: string(parked.ID), Url: hook})
			wantGRPC(t, err, codes.InvalidArgument, "INVALID_PARAMS", "--allow-private-push")
		})
	}
	for _, hook := range []string{"ftp://example.com/hook", "/hook", "http:///hook"} {
		_, body := h.raw("POST", "/", fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":{"taskId":%q,"url":%q}}`, parked.ID, hook), nil)
		wantRPC(t, body, -32602, "http or https")
	}
	// A message whose configuration names such a webhook starts nothing.
	before := h.sessions.Load()
	_, body := h.raw("POST", "/", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"p1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"taskPushNotificationConfig":{"url":"http://127.0.0.1:9/hook"}}}}`, nil)
	wantRPC(t, body, -32602, "--allow-private-push")
	if h.sessions.Load() != before {
		t.Errorf("a refused push config started a session")
	}
	// A public webhook is accepted (nothing is sent until the task changes).
	cfg, err := h.client("jsonrpc").CreateTaskPushConfig(t.Context(), &a2a.PushConfig{TaskID: parked.ID, URL: "https://hooks.example.com/a2a"})
	if err != nil || cfg.URL != "https://hooks.example.com/a2a" {
		t.Errorf("public webhook: %+v %v", cfg, err)
	}

	allowed := newHarness(t, []string{callTurn("", "write_file", map[string]any{"file_path": "a.txt", "content": "x"})},
		func(c *protocol.Config, _ *config.Settings) { c.AllowPrivatePush = true })
	task := collect(t, allowed.client("jsonrpc"), userMessage("write", ""))[0].(*a2a.Task)
	if _, err := allowed.client("rest").CreateTaskPushConfig(t.Context(), &a2a.PushConfig{TaskID: task.ID, URL: "http://127.0.0.1:9/hook"}); err != nil {
		t.Errorf("with AllowPrivatePush a loopback webhook is refused: %v", err)
	}
}

// TestRESTProtoFieldNames: over REST a message may name its fields as the
// protobuf does (message_id, context_id, media_type), as ProtoJSON
// parsers accept and the A2A TCK's REST client sends; they are not lost.
func TestRESTProtoFieldNames(t *testing.T) {
	h := newHarness(t, []string{textTurn("One."), textTurn("Two.")})
	first := collect(t, h.client("jsonrpc"), userMessage("one", ""))[0].(*a2a.Task)
	code, body := h.raw("POST", "/rest/message:send", fmt.Sprintf(
		`{"message":{"message_id":"p1","role":"ROLE_USER","context_id":%q,"parts":[{"text":"two","media_type":"text/plain"}]},"configuration":{"history_length":1}}`,
		first.ContextID), nil)
	if code != http.StatusOK {
		t.Fatalf("HTTP %d %s", code, body)
	}
	var resp struct {
		Task *a2a.Task `json:"task"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || resp.Task == nil {
		t.Fatalf("%v: %s", err, body)
	}
	if resp.Task.ContextID != first.ContextID || resp.Task.Status.State != a2a.TaskStateCompleted || len(resp.Task.History) != 1 {
		t.Errorf("task %s in context %s (want %s), %d history messages (want 1)", resp.Task.Status.State, resp.Task.ContextID, first.ContextID, len(resp.Task.History))
	}
	got, err := h.client("jsonrpc").GetTask(t.Context(), &a2a.GetTaskRequest{ID: resp.Task.ID})
	if err != nil || got.History[0].ID != "p1" || got.History[0].Parts[0].MediaType != "text/plain" {
		t.Errorf("stored message: %+v %v", got.History[0], err)
	}
}
