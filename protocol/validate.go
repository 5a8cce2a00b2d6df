package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	a2alegacy "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/v2/a2a"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/grpc"

	"github.com/agentry-dev/agentry/protocol/webhook"
)

// Request validation. Every binding decodes a request into a2a-go's
// types and the interceptor checks them (check); what decoding loses —
// a pageSize of 0 sent on purpose, a timestamp that does not parse, a
// negative historyLength gRPC drops — is checked on the wire first, per
// binding (refuseRPC, restChecks, grpcChecks). Errors are a2a-go's
// sentinels, rendered by a2a-go's own transports, so that the codes of
// every binding come from a2a-go's one table.

// The limits of ListTasks' pageSize (A2A 1.0, ListTasksRequest).
const (
	minPageSize = 1
	maxPageSize = 100
)

// taskStates are the states a ListTasks status filter may name.
var taskStates = []a2a.TaskState{
	a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired,
	a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateRejected,
}

func invalidParams(format string, args ...any) error {
	return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf(format, args...))
}

func checkPageSize(n int) error {
	if n < minPageSize || n > maxPageSize {
		return invalidParams("pageSize must be from %d to %d (50 if left out), got %d", minPageSize, maxPageSize, n)
	}
	return nil
}

func checkHistoryLength(field string, n int) error {
	if n < 0 {
		return invalidParams("%s must be 0 or more (the number of most recent messages to return; leave it out for the whole history), got %d", field, n)
	}
	return nil
}

func checkStatus(s a2a.TaskState) error {
	for _, st := range taskStates {
		if s == st {
			return nil
		}
	}
	names := make([]string, len(taskStates))
	for i, st := range taskStates {
		names[i] = string(st)
	}
	return invalidParams("status %q is not a task state: use one of %s", s, strings.Join(names, ", "))
}

func checkTimestamp(s string) error {
	if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
		return invalidParams("statusTimestampAfter %q is not a timestamp: use RFC 3339, e.g. 2025-10-27T10:00:00Z", s)
	}
	return nil
}

// check validates a request's payload, whatever its binding, before
// anything acts on it: a message that would start a task, a listing's
// filters, a push notification config.
func (s *Server) check(payload any) error {
	switch p := payload.(type) {
	case *a2a.SendMessageRequest:
		if err := checkMessage(p.Message); err != nil {
			return err
		}
		if c := p.Config; c != nil {
			if c.HistoryLength != nil {
				if err := checkHistoryLength("configuration.historyLength", *c.HistoryLength); err != nil {
					return err
				}
			}
			if c.PushConfig != nil {
				return checkPushURL(c.PushConfig.URL, s.cfg.AllowPrivatePush)
			}
		}
	case *a2a.GetTaskRequest:
		if p.HistoryLength != nil {
			return checkHistoryLength("historyLength", *p.HistoryLength)
		}
	case *a2a.ListTasksRequest:
		// A pageSize of 0 is indistinguishable from none here; the
		// bindings' own checks refuse one sent on purpose.
		if p.PageSize != 0 {
			if err := checkPageSize(p.PageSize); err != nil {
				return err
			}
		}
		if p.Status != a2a.TaskStateUnspecified {
			if err := checkStatus(p.Status); err != nil {
				return err
			}
		}
		if p.HistoryLength != nil {
			return checkHistoryLength("historyLength", *p.HistoryLength)
		}
	case *a2a.PushConfig:
		return checkPushURL(p.URL, s.cfg.AllowPrivatePush)
	}
	return nil
}

// checkMessage refuses a message missing what A2A requires of it.
func checkMessage(m *a2a.Message) error {
	switch {
	case m == nil:
		return invalidParams("message is required: {\"messageId\": \"…\", \"role\": \"ROLE_USER\", \"parts\": [{\"text\": \"…\"}]}")
	case m.ID == "":
		return invalidParams("message.messageId is required: a unique id for the message, e.g. a UUID")
	case m.Role != a2a.MessageRoleUser && m.Role != a2a.MessageRoleAgent:
		if m.Role == a2a.MessageRoleUnspecified {
			return invalidParams("message.role is required: ROLE_USER for a client's message")
		}
		return invalidParams("message.role %q is not a role: ROLE_USER for a client's message", m.Role)
	case len(m.Parts) == 0:
		return invalidParams("message.parts must hold at least one part: text, data, url or raw")
	}
	for i, p := range m.Parts {
		if p == nil || p.Content == nil {
			return invalidParams("message.parts[%d] has no content: give it one of text, data, url or raw", i)
		}
	}
	return nil
}

// checkPushURL refuses a webhook agentry would not call: not an absolute
// http(s) URL, or, unless private webhooks are allowed, one naming this
// machine or an address webhook.Special refuses (IANA's special-purpose
// blocks: private, shared, link-local, documentation, benchmarking …).
// Only what the URL says is checked here; a host name resolving to such
// an address is refused when a notification is sent (webhook.Sender
// checks every address it connects to).
func checkPushURL(raw string, allowPrivate bool) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return invalidParams("push notification URL %q must be an absolute http or https URL", raw)
	}
	if allowPrivate {
		return nil
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	what := ""
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		what = "this machine"
	} else if ip, err := netip.ParseAddr(host); err == nil {
		if rg, bad := webhook.Special(ip); bad {
			what = rg.Name
		}
	}
	if what == "" {
		return nil
	}
	return invalidParams("push notification URL %s points at %s: agentry sends no webhooks there unless the server runs with --allow-private-push (security.a2a.allowPrivatePush)", raw, what)
}

// ListTasks lists the stored tasks. A page token the store cannot read
// is the client's mistake, not a parse error of the request; the token
// stays the store's own, opaque.
func (h handler) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	resp, err := h.RequestHandler.ListTasks(ctx, req)
	if err != nil && req.PageToken != "" && errors.Is(err, a2a.ErrParseError) {
		return nil, invalidParams("pageToken %q is not one this server gave out: pass the nextPageToken of a ListTasks response, or leave it out for the first page", req.PageToken)
	}
	return resp, err
}

// finishedTask is the error for a message to a task that has ended: A2A
// makes a task in a terminal state immutable.
func finishedTask(id a2a.TaskID, task *a2a.Task) error {
	return a2a.NewError(a2a.ErrUnsupportedOperation, fmt.Sprintf(
		"task %s is %s and takes no more messages: send the next one as a new task in context %s (leave taskId out)", id, stateName(task.Status.State), task.ContextID))
}

// stateName names a task state in words: TASK_STATE_INPUT_REQUIRED is
// "input required".
func stateName(s a2a.TaskState) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(string(s), "TASK_STATE_")), "_", " ")
}

// The JSON-RPC methods whose params refuseRPC decodes, with the type
// a2a-go decodes them into.
var rpcParams = map[string]reflect.Type{
	"SendMessage":                      reflect.TypeFor[a2a.SendMessageRequest](),
	"SendStreamingMessage":             reflect.TypeFor[a2a.SendMessageRequest](),
	"GetTask":                          reflect.TypeFor[a2a.GetTaskRequest](),
	"ListTasks":                        reflect.TypeFor[a2a.ListTasksRequest](),
	"CancelTask":                       reflect.TypeFor[a2a.CancelTaskRequest](),
	"SubscribeToTask":                  reflect.TypeFor[a2a.SubscribeToTaskRequest](),
	"CreateTaskPushNotificationConfig": reflect.TypeFor[a2a.PushConfig](),
	"GetTaskPushNotificationConfig":    reflect.TypeFor[a2a.GetTaskPushConfigRequest](),
	"ListTaskPushNotificationConfigs":  reflect.TypeFor[a2a.ListTaskPushConfigRequest](),
	"DeleteTaskPushNotificationConfig": reflect.TypeFor[a2a.DeleteTaskPushConfigRequest](),
	"message/send":                     reflect.TypeFor[a2alegacy.MessageSendParams](),
	"message/stream":                   reflect.TypeFor[a2alegacy.MessageSendParams](),
	"tasks/get":                        reflect.TypeFor[a2alegacy.TaskQueryParams](),
	"tasks/cancel":                     reflect.TypeFor[a2alegacy.TaskIDParams](),
	"tasks/resubscribe":                reflect.TypeFor[a2alegacy.TaskIDParams](),
}

// refuseRPC answers, and reports true for, a JSON-RPC request a2a-go
// would misjudge: a batch (a2a-go reads an array as a malformed request
// object), params that are JSON but do not decode into the method's
// request (a2a-go calls some of those parse errors, which mean the body
// is not JSON), and ListTasks values decoding loses.
func (h *httpHandler) refuseRPC(w http.ResponseWriter, r *http.Request, body []byte, env rpcEnvelope) bool {
	if b := bytes.TrimLeft(body, " \t\r\n"); len(b) > 0 && b[0] == '[' {
		h.writeRPCError(w, r, "", nil, a2a.NewError(a2a.ErrInvalidRequest,
			"batch requests are not supported: send one JSON-RPC request object per HTTP request"))
		return true
	}
	typ, ok := rpcParams[env.Method]
	if !ok || env.JSONRPC != "2.0" || !validRPCID(env.ID) || len(env.Params) == 0 || string(env.Params) == "null" {
		return false // a2a-go's answer is right
	}
	err := json.Unmarshal(env.Params, reflect.New(typ).Interface())
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return false // not JSON: a2a-go's parse error
	}
	var werr error
	switch env.Method {
	case "ListTasks":
		werr = checkListParams(env.Params)
	case "SendMessage", "SendStreamingMessage":
		werr = checkParts(env.Params)
	}
	if werr != nil {
		err = werr
	}
	if err == nil {
		return false
	}
	if !errors.Is(err, a2a.ErrInvalidParams) {
		err = invalidParams("params of %s: %v", env.Method, err)
	}
	h.writeRPCError(w, r, env.Method, env.ID, err)
	return true
}

// checkListParams checks ListTasks params as sent: an explicit pageSize
// of 0, integers that are not, and timestamps that do not parse.
func checkListParams(params json.RawMessage) error {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return nil // not an object: decoding said why
	}
	if v, ok := p["pageSize"]; ok {
		var n int
		if json.Unmarshal(v, &n) != nil {
			return invalidParams("pageSize must be an integer from %d to %d, got %s", minPageSize, maxPageSize, v)
		}
		if err := checkPageSize(n); err != nil {
			return err
		}
	}
	if v, ok := p["historyLength"]; ok {
		var n int
		if json.Unmarshal(v, &n) != nil {
			return invalidParams("historyLength must be an integer, 0 or more, got %s", v)
		}
	}
	if v, ok := p["statusTimestampAfter"]; ok {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return invalidParams("statusTimestampAfter must be an RFC 3339 timestamp string, e.g. \"2025-10-27T10:00:00Z\", got %s", v)
		}
		return checkTimestamp(s)
	}
	return nil
}

// checkParts names the part of a message that does not decode (the
// decoder's own error does not say where it is).
func checkParts(params json.RawMessage) error {
	var p struct {
		Message struct {
			Parts []json.RawMessage `json:"parts"`
		} `json:"message"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	for i, raw := range p.Message.Parts {
		var part a2a.Part
		if err := json.Unmarshal(raw, &part); err != nil {
			return invalidParams("message.parts[%d]: %v; a part holds exactly one of text, data, url or raw", i, err)
		}
	}
	return nil
}

// validRPCID reports whether a JSON-RPC id is absent, null, a string or a
// number.
func validRPCID(id json.RawMessage) bool {
	if len(id) == 0 {
		return true
	}
	var v any
	if json.Unmarshal(id, &v) != nil {
		return false
	}
	switch v.(type) {
	case nil, string, float64:
		return true
	}
	return false
}

// writeRPCError writes err as a2a-go's JSON-RPC handler of the method's
// version would.
func (h *httpHandler) writeRPCError(w http.ResponseWriter, r *http.Request, method string, id json.RawMessage, err error) {
	errs, errMethod := h.errs, "GetTask"
	if strings.Contains(method, "/") {
		errs, errMethod = h.errs0, "tasks/get"
	}
	if len(id) == 0 || !validRPCID(id) {
		id = json.RawMessage("null")
	}
	body := errorJSON(r.Context(), errs, errMethod, id, err)
	w.Header().Set("Content-Type", "application/json")
	if streaming(method) {
		// A refused stream is an HTTP error, not a 200 stream: the
		// status A2A's REST binding gives the error.
		w.WriteHeader(h.httpStatus(r.Context(), err))
	}
	_, _ = w.Write(append(body, '\n'))
}

// errorEchoList is errorEcho for a listing: a2a-go's REST handler renders
// its error without a task id.
type errorEchoList struct{ errorEcho }

func (errorEchoList) ListTasks(ctx context.Context, _ *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	return nil, ctx.Value(errorKey{}).(error)
}

// restChecks wraps the REST binding (mounted at /): it checks what
// a2a-go's query parsing loses or misnames before a2a-go sees the request,
// and answers a task that cannot be canceled with 409 Conflict, A2A's
// status for it (a2a-go's table says 400).
func restChecks(next http.Handler) http.Handler {
	echo := a2asrv.NewRESTHandler(errorEchoList{})
	refuse := func(w http.ResponseWriter, r *http.Request, path string, err error) {
		req, rerr := http.NewRequestWithContext(context.WithValue(r.Context(), errorKey{}, err), http.MethodGet, path, nil)
		if rerr != nil {
			http.Error(w, rerr.Error(), http.StatusInternalServerError)
			return
		}
		echo.ServeHTTP(w, req)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, isTask := strings.CutPrefix(r.URL.Path, "/tasks/")
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/tasks":
			if err := checkListQuery(r.URL.Query()); err != nil {
				refuse(w, r, "/tasks", err)
				return
			}
		case r.Method == http.MethodGet && isTask && rest != "" && !strings.ContainsAny(rest, ":/"):
			if v := r.URL.Query().Get("historyLength"); v != "" {
				n, err := strconv.Atoi(v)
				if err == nil {
					err = checkHistoryLength("historyLength", n)
				} else {
					err = invalidParams("historyLength must be an integer, 0 or more, got %q", v)
				}
				if err != nil {
					refuse(w, r, "/tasks/"+rest, err)
					return
				}
			}
		case r.Method == http.MethodPost && isTask && strings.HasSuffix(rest, ":cancel"):
			cancelConflict(next, w, r)
			return
		case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/message:") && r.URL.Path != "/message:send" && r.URL.Path != "/message:stream":
			refuse(w, r, "/tasks/-", a2a.NewError(a2a.ErrMethodNotFound, fmt.Sprintf(
				"the REST binding has no method %s (it has POST /message:send and POST /message:stream): %s", strings.TrimPrefix(r.URL.Path, "/"), liveGRPCOnly)))
			return
		case r.Method == http.MethodPost && (r.URL.Path == "/message:send" || r.URL.Path == "/message:stream"):
			if body, err := io.ReadAll(r.Body); err == nil {
				body = camelNames(body)
				r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			} else {
				r.Body = io.NopCloser(errReader{err})
			}
		}
		next.ServeHTTP(w, r)
	})
}

// protoNames are the protobuf field names of a SendMessageRequest's
// members that ProtoJSON also accepts, with their JSON names. a2a-go
// decodes the JSON names only; a client writing the proto names (the A2A
// TCK's REST client does) would lose its message's ids.
var protoNames = map[string]string{
	"message_id": "messageId", "context_id": "contextId", "task_id": "taskId",
	"reference_task_ids": "referenceTaskIds", "media_type": "mediaType",
	"accepted_output_modes": "acceptedOutputModes", "history_length": "historyLength",
	"return_immediately": "returnImmediately", "task_push_notification_config": "taskPushNotificationConfig",
}

// camelNames renames the proto names of a SendMessageRequest body (its
// message, parts and configuration) to their JSON names, as a ProtoJSON
// parser reads them. A body it cannot read is returned as it is.
func camelNames(body []byte) []byte {
	var req map[string]json.RawMessage
	if json.Unmarshal(body, &req) != nil {
		return body
	}
	changed := false
	rename := func(raw json.RawMessage, nested func(map[string]json.RawMessage)) json.RawMessage {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return raw
		}
		for proto, name := range protoNames {
			if v, ok := m[proto]; ok {
				if _, dup := m[name]; !dup {
					m[name] = v
				}
				delete(m, proto)
				changed = true
			}
		}
		if nested != nil {
			nested(m)
		}
		out, err := json.Marshal(m)
		if err != nil {
			return raw
		}
		return out
	}
	if msg, ok := req["message"]; ok {
		req["message"] = rename(msg, func(m map[string]json.RawMessage) {
			var parts []json.RawMessage
			if json.Unmarshal(m["parts"], &parts) != nil {
				return
			}
			for i, p := range parts {
				parts[i] = rename(p, nil)
			}
			if b, err := json.Marshal(parts); err == nil {
				m["parts"] = b
			}
		})
	}
	if c, ok := req["configuration"]; ok {
		req["configuration"] = rename(c, nil)
	}
	if !changed {
		return body
	}
	out, err := json.Marshal(req)
	if err != nil {
		return body
	}
	return out
}

// errReader fails every read with err (a body that could not be read).
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// checkListQuery checks a REST ListTasks query.
func checkListQuery(q url.Values) error {
	if v := q.Get("pageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return invalidParams("pageSize must be an integer from %d to %d, got %q", minPageSize, maxPageSize, v)
		}
		if err := checkPageSize(n); err != nil {
			return err
		}
	}
	if v := q.Get("historyLength"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return invalidParams("historyLength must be an integer, 0 or more, got %q", v)
		}
		if err := checkHistoryLength("historyLength", n); err != nil {
			return err
		}
	}
	if v := q.Get("status"); v != "" {
		if err := checkStatus(a2a.TaskState(v)); err != nil {
			return err
		}
	}
	if v := q.Get("statusTimestampAfter"); v != "" {
		if err := checkTimestamp(v); err != nil {
			return err
		}
	}
	if v := q.Get("includeArtifacts"); v != "" {
		if _, err := strconv.ParseBool(v); err != nil {
			return invalidParams("includeArtifacts must be true or false, got %q", v)
		}
	}
	return nil
}

// cancelConflict serves a REST cancel, turning a2a-go's 400 for a task
// that cannot be canceled into 409 Conflict (in the status line and the
// error's code).
func cancelConflict(next http.Handler, w http.ResponseWriter, r *http.Request) {
	rec := &recorder{header: http.Header{}}
	next.ServeHTTP(rec, r)
	body := rec.body.Bytes()
	code := rec.code
	if code == 0 {
		code = http.StatusOK
	}
	if code == http.StatusBadRequest {
		var e struct {
			Error struct {
				Code    int               `json:"code"`
				Status  string            `json:"status"`
				Message string            `json:"message"`
				Details []json.RawMessage `json:"details,omitempty"`
			} `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && hasReason(e.Error.Details, a2a.ErrorReason(a2a.ErrTaskNotCancelable)) {
			e.Error.Code = http.StatusConflict
			if b, err := json.Marshal(e); err == nil {
				code, body = http.StatusConflict, append(b, '\n')
			}
		}
	}
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// hasReason reports whether an error's details hold an A2A ErrorInfo
// with the reason.
func hasReason(details []json.RawMessage, reason string) bool {
	for _, d := range details {
		var info struct {
			Type   string `json:"@type"`
			Reason string `json:"reason"`
			Domain string `json:"domain"`
		}
		if json.Unmarshal(d, &info) == nil && strings.HasSuffix(info.Type, "google.rpc.ErrorInfo") && info.Reason == reason && info.Domain == a2a.ProtocolDomain {
			return true
		}
	}
	return false
}

// grpcChecks checks what a2a-go's conversion from protobuf loses: a
// negative historyLength (dropped) and a status that is no TaskState
// value. A page size of 0 is taken for none, as a2a-go's own client sends
// it when none is set.
func grpcChecks() grpc.UnaryServerInterceptor {
	echo := a2agrpc.NewHandler(errorEcho{})
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		var err error
		switch p := req.(type) {
		case *a2apb.ListTasksRequest:
			// a2a-go's client sends 0 for "not set": only a size
			// outside the range is refused.
			if p.PageSize != nil && *p.PageSize != 0 {
				err = checkPageSize(int(*p.PageSize))
			}
			if err == nil && p.HistoryLength != nil {
				err = checkHistoryLength("historyLength", int(*p.HistoryLength))
			}
			if _, known := a2apb.TaskState_name[int32(p.GetStatus())]; err == nil && !known {
				err = invalidParams("status %d is not a task state: use a TaskState value", p.GetStatus())
			}
		case *a2apb.GetTaskRequest:
			if p.HistoryLength != nil {
				err = checkHistoryLength("historyLength", int(*p.HistoryLength))
			}
		}
		if err != nil {
			// a2a-go's gRPC handler renders the error, details included.
			return nil, grpcError(ctx, echo, err)
		}
		return next(ctx, req)
	}
}
