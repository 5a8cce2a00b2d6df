package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"

	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/protocol/liveclient"
)

// RESTPath is where the REST binding is mounted.
const RESTPath = "/rest"

// Handler returns the HTTP handler for every binding on one port:
//
//   - GET /.well-known/agent-card.json: the agent card (also readable by
//     A2A 0.3 clients: a2a-go's union card);
//   - POST /: JSON-RPC. A2A 1.0 methods (SendMessage …), A2A 0.3 methods
//     (message/send …; the binding gemini-cli's generation speaks) and the
//     extension's commands/get and command/execute, told apart by the
//     method name;
//   - /rest/…: the REST binding;
//   - gRPC (HTTP/2, application/grpc): service lf.a2a.v1.A2AService,
//     a2a-go's methods and the bidirectional SendLiveMessage
//     (docs/live.md).
//
// It answers the A2A-Extensions header with the activated extension. The
// caller wraps it in package guard's checks.
func (s *Server) Handler() http.Handler {
	g := grpc.NewServer(
		grpc.ChainUnaryInterceptor(grpcChecks()),
		grpc.ChainStreamInterceptor(s.traceStreams),
		grpc.MaxRecvMsgSize(s.cfg.MaxMessageBytes),
		grpc.ForceServerCodecV2(liveCodec{encoding.GetCodecV2(grpcproto.Name)}),
	)
	s.registerGRPC(g)
	return &httpHandler{
		s:        s,
		card:     a2asrv.NewAgentCardHandler(s.cardProducer()),
		v1:       a2asrv.NewJSONRPCHandler(s.handler),
		v0:       a2av0.NewJSONRPCHandler(s.handler),
		rest:     http.StripPrefix(RESTPath, restChecks(a2asrv.NewRESTHandler(s.handler))),
		errs:     a2asrv.NewJSONRPCHandler(errorEcho{}),
		errs0:    a2av0.NewJSONRPCHandler(errorEcho{}),
		errsREST: a2asrv.NewRESTHandler(errorEcho{}),
		grpc:     g,
	}
}

type httpHandler struct {
	s                  *Server
	card, v1, v0, rest http.Handler
	grpc               http.Handler
	// errs and errs0 render stream errors for the SSE writer, in 1.0 and
	// 0.3 (see errorJSON); errsREST gives their HTTP status.
	errs, errs0, errsREST http.Handler
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
		if r.URL.Path == liveclient.Method {
			lw := &liveWriter{ResponseWriter: w}
			w, r = lw, r.WithContext(context.WithValue(r.Context(), liveWriterKey{}, lw))
		}
		h.grpc.ServeHTTP(w, r)
		return
	}
	echoExtensions(w, r)
	switch {
	case r.URL.Path == a2asrv.WellKnownAgentCardPath:
		h.card.ServeHTTP(w, r)
	case r.URL.Path == WSPath:
		h.ws(w, r)
	case r.URL.Path == "/":
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			httpError(w, http.StatusMethodNotAllowed, "JSON-RPC requests are POSTed to /")
			return
		}
		h.jsonrpc(w, r)
	case r.URL.Path == RESTPath || strings.HasPrefix(r.URL.Path, RESTPath+"/"):
		if strings.HasSuffix(r.URL.Path, ":stream") || strings.HasSuffix(r.URL.Path, ":subscribe") {
			rs := &restStream{w: w}
			h.rest.ServeHTTP(rs, r)
			rs.decide()
			return
		}
		h.rest.ServeHTTP(w, r)
	default:
		httpError(w, http.StatusNotFound, fmt.Sprintf("no endpoint at %s: the agent card is at %s", r.URL.Path, a2asrv.WellKnownAgentCardPath))
	}
}

// echoExtensions answers the extensions a client asked for with the ones
// it gets. a2a-go echoes them only on gRPC (in trailers); over HTTP the
// header must go out before the SDK writes its response. An incompatible
// version is refused by the interceptor.
func echoExtensions(w http.ResponseWriter, r *http.Request) {
	for _, name := range []string{"A2A-Extensions", "X-A2A-Extensions"} {
		for _, v := range r.Header.Values(name) {
			for _, uri := range strings.Split(v, ",") {
				if ours, err := devtool.Supports(strings.TrimSpace(uri)); ours && err == nil {
					w.Header().Set(name, devtool.URI)
				}
			}
		}
	}
}

// rpcEnvelope is what the JSON-RPC dispatcher reads of a request.
type rpcEnvelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// jsonrpc dispatches on the method: the extension's methods are served
// here (a2a-go has no hook for custom methods), 0.3 methods (with a
// slash) by the compatibility handler, the rest by a2a-go's 1.0 handler,
// which also answers malformed requests.
func (h *httpHandler) jsonrpc(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		// The guard's size limit, or a broken connection.
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d bytes", tooBig.Limit))
			return
		}
		httpError(w, http.StatusBadRequest, "cannot read the request body: "+err.Error())
		return
	}
	var env rpcEnvelope
	_ = json.Unmarshal(body, &env)
	if h.refuseRPC(w, r, body, env) {
		return
	}
	switch env.Method {
	case liveclient.MethodName:
		h.writeRPCError(w, r, env.Method, env.ID, a2a.NewError(a2a.ErrMethodNotFound, liveGRPCOnly))
		return
	case "commands/get":
		h.s.commandsGet(w, r, env)
		return
	case "command/execute":
		h.s.commandExecute(w, r, env)
		return
	}
	if streaming(env.Method) && h.sse(w, r, env) {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	if strings.Contains(env.Method, "/") {
		h.v0.ServeHTTP(w, r)
		return
	}
	h.v1.ServeHTTP(w, r)
}

func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// The JSON-RPC 2.0 error codes the extension's methods answer with
// (a2a-go answers for the rest).
const (
	rpcInvalidParams = -32602
	rpcInternalError = -32603
)

func writeRPC(w http.ResponseWriter, id json.RawMessage, result any, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	out := map[string]any{"jsonrpc": "2.0", "id": id}
	if code != 0 {
		out["error"] = map[string]any{"code": code, "message": msg}
	} else {
		out["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// restStream holds back a REST stream's status until its first event.
// a2a-go answers a streaming request it refuses before any event (a bad
// message, an unknown task) with a 200 stream whose one event is the
// error, which clients read as an empty event; restStream answers it with
// the error's HTTP status and the error as A2A's REST error body, the
// response a2a-go gives a refused non-streaming request.
type restStream struct {
	w       http.ResponseWriter
	status  int
	held    []byte
	decided bool
	refused bool
}

func (rs *restStream) Header() http.Header { return rs.w.Header() }

func (rs *restStream) WriteHeader(code int) {
	if rs.decided {
		rs.w.WriteHeader(code)
	} else if rs.status == 0 {
		rs.status = code
	}
}

func (rs *restStream) Write(p []byte) (int, error) {
	switch {
	case rs.refused:
		return len(p), nil // the error is answered; nothing follows it
	case rs.decided:
		return rs.w.Write(p)
	}
	rs.held = append(rs.held, p...)
	if bytes.Contains(rs.held, []byte("\n\n")) {
		rs.decide()
	}
	return len(p), nil
}

// Flush implements http.Flusher, which a2a-go's SSE writer requires.
func (rs *restStream) Flush() {
	rs.decide()
	if !rs.refused {
		_ = http.NewResponseController(rs.w).Flush()
	}
}

// decide writes what was held: the stream as it began, or, when its first
// event is an error, that error with its status.
func (rs *restStream) decide() {
	if rs.decided {
		return
	}
	rs.decided = true
	if body, code := restStreamError(rs.held); code >= 400 {
		rs.refused = true
		hdr := rs.w.Header()
		hdr.Del("Cache-Control")
		hdr.Del("X-Accel-Buffering")
		hdr.Set("Content-Type", "application/json")
		rs.w.WriteHeader(code)
		_, _ = rs.w.Write(append(body, '\n'))
		return
	}
	if rs.status != 0 {
		rs.w.WriteHeader(rs.status)
	}
	if len(rs.held) > 0 {
		_, _ = rs.w.Write(rs.held)
	}
}

// restStreamError returns the data of a stream's first event and its
// HTTP status when the event is a REST error ({"error": {"code": …}}).
func restStreamError(stream []byte) ([]byte, int) {
	for _, line := range bytes.Split(stream, []byte("\n")) {
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		data = bytes.TrimSpace(data)
		var e struct {
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(data, &e) != nil || e.Error == nil {
			return nil, 0
		}
		return data, e.Error.Code
	}
	return nil, 0
}
