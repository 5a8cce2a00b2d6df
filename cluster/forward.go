package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// ForwardedHeader marks a request one replica forwarded to another; its
// value is the forwarding replica's id. A forwarded request is never
// forwarded again: the replica it reaches serves it, taking the context
// over if its holder died, or refuses it.
const ForwardedHeader = "X-Agentry-Forwarded"

// Handler returns next behind the cluster's router. It finds the context
// a request is about — a JSON-RPC message's contextId or taskId, a task
// id (resolved through Config.Tasks), commands/get's and
// command/execute's context_id, a REST path's task or message, /ws's
// contextId query parameter, a gRPC call's first message (its message's
// context or task, its task, a ListTasks's context_id) — and serves it with next when this replica
// holds the context's lease or can take it; otherwise it forwards the
// request, streams, WebSocket upgrades and gRPC calls (over HTTP/2,
// SendLiveMessage's two streams included) to the holder's advertised URL
// with ForwardedHeader (the client's Authorization goes with it: the
// replicas share the token). Requests naming no context (a new
// conversation, listings, the card) are served here. A gRPC call is
// refused with a gRPC status (trailers only), any other request with an
// HTTP error. Put it inside the HTTP guard, so that a client's token is
// checked before anything is forwarded.
func (n *Node) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isGRPC(r) {
			contextID, sub, err := n.grpcContext(r)
			var ref *grpcRefusal
			switch {
			case errors.As(err, &ref):
				grpcError(w, ref.code, ref.msg)
				return
			case err != nil:
				grpcError(w, grpcInternal, err.Error())
				return
			}
			n.route(w, r, next, contextID, sub, n.grpcProxy, func(w http.ResponseWriter, code int, msg string) {
				grpcError(w, grpcCode(code), msg)
			})
			return
		}
		contextID, sub, err := n.contextOf(r)
		if err != nil {
			routeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		n.route(w, r, next, contextID, sub, n.proxy, routeError)
	})
}

// route serves a request about contextID here or forwards it through p;
// fail answers what cannot be either, given an HTTP status. A subscribe
// to task sub is served here, from the event log, when
// Config.SubscribeFromLog is set and the log has the task's events;
// otherwise (the holder has not logged its first event yet, or ran the
// task before the log existed) it goes to the holder as other requests
// do.
func (n *Node) route(w http.ResponseWriter, r *http.Request, next http.Handler, contextID, sub string, p *proxy, fail func(http.ResponseWriter, int, string)) {
	if contextID == "" {
		next.ServeHTTP(w, r)
		return
	}
	if sub != "" && n.cfg.SubscribeFromLog && n.logged(r.Context(), sub) {
		// Whoever holds the context, the log has the task: no lease is
		// taken (a new context's holder logs its first task before it
		// takes the lease); the follower checks the holder as it waits.
		next.ServeHTTP(w, r)
		return
	}
	o, err := n.Acquire(r.Context(), contextID)
	switch {
	case err != nil:
		fail(w, http.StatusServiceUnavailable, fmt.Sprintf("context %s: %v", contextID, err))
		return
	case o.Self:
		next.ServeHTTP(w, r)
		return
	}
	if from := r.Header.Get(ForwardedHeader); from != "" {
		fail(w, http.StatusServiceUnavailable, fmt.Sprintf(
			"context %s is served by replica %s at %s; replica %s forwarded this request here believing this one served it, and a forwarded request is not forwarded again: send it again",
			contextID, o.ReplicaID, o.URL, from))
		return
	}
	u, err := url.Parse(o.URL)
	if err != nil {
		fail(w, http.StatusBadGateway, fmt.Sprintf("context %s is served by replica %s, whose address %q is not a URL: %v", contextID, o.ReplicaID, o.URL, err))
		return
	}
	t := &target{url: u, context: contextID, owner: o, next: next}
	if !isGRPC(r) {
		t.body, t.replay = stash(r)
	}
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), targetKey{}, t)))
}

// stash keeps a request's body, read already by the router (or none), so
// that a request its holder never received can be served again.
func stash(r *http.Request) ([]byte, bool) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, true
	}
	if r.Method != http.MethodPost {
		return nil, false
	}
	return readBody(r), true
}

// Waiting for a dead holder's lease: PostgreSQL frees it when it sees
// the holder's connection close, at once on one machine and within about
// 8 s (the lease connection's keepalives) when the holder's machine
// vanished.
const (
	takeoverPoll  = 500 * time.Millisecond
	takeoverTries = 20
)

// takeOver serves a request its holder did not answer because the holder
// could not be reached at all (the request never left this replica): it
// waits for the holder's lease to be freed and serves the request here,
// or forwards it to a new holder, once. It reports whether it answered.
func (p *proxy) takeOver(w http.ResponseWriter, r *http.Request, t *target) bool {
	n := p.n
	if t.retried || !t.replay || t.next == nil {
		return false
	}
	t.retried = true
	for range takeoverTries {
		select {
		case <-n.cfg.After(takeoverPoll):
		case <-r.Context().Done():
			return false
		}
		o, err := n.Acquire(r.Context(), t.context)
		if err != nil {
			return false
		}
		if o.ReplicaID == t.owner.ReplicaID {
			continue // the holder's lease lives on: wait
		}
		if t.body != nil {
			r.Body = io.NopCloser(bytes.NewReader(t.body))
		}
		if o.Self {
			n.log.Info("cluster: took over a context whose holder did not answer", "context", t.context, "replica", t.owner.ReplicaID)
			t.next.ServeHTTP(w, r)
			return true
		}
		u, err := url.Parse(o.URL)
		if err != nil {
			return false
		}
		t.url, t.owner = u, o
		p.rp.ServeHTTP(w, r)
		return true
	}
	return false
}

// unreached reports whether err means the request never reached the
// holder: its connection could not be made.
func unreached(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// contextOf returns the context a request is about, "" for none, and
// the task it subscribes to, if it does.
func (n *Node) contextOf(r *http.Request) (contextID, subTask string, err error) {
	p := r.URL.Path
	switch {
	case p == "/ws":
		return r.URL.Query().Get("contextId"), "", nil
	case p == "/" && r.Method == http.MethodPost:
		body := readBody(r)
		var env struct {
			Method string  `json:"method"`
			Params *params `json:"params"`
		}
		if json.Unmarshal(body, &env) != nil || env.Params == nil {
			return "", "", nil // the handler answers malformed requests
		}
		switch env.Method {
		case "ListTasks", "tasks/list":
			// A context's listing is its holder's: its tasks under way
			// are in the holder's memory.
			return firstOf(env.Params.ContextID, env.Params.CommandContext), "", nil
		case "GetExtendedAgentCard", "agent/getAuthenticatedExtendedCard":
			return "", "", nil
		case "commands/get", "command/execute":
			// commands/get with a context lists its MCP prompts too.
			return env.Params.CommandContext, "", nil
		}
		id, err := n.paramsContext(r.Context(), env.Params)
		if env.Method == "SubscribeToTask" || env.Method == "tasks/resubscribe" {
			return id, firstOf(env.Params.TaskID, env.Params.ID), err
		}
		return id, "", err
	case strings.HasPrefix(p, "/rest/"):
		rest := strings.TrimPrefix(p, "/rest/")
		if rest == "tasks" && r.Method == http.MethodGet {
			return r.URL.Query().Get("contextId"), "", nil
		}
		if task, ok := strings.CutPrefix(rest, "tasks/"); ok {
			if i := strings.IndexAny(task, ":/"); i >= 0 {
				task = task[:i]
			}
			id, err := n.taskContext(r.Context(), task)
			if strings.HasSuffix(p, ":subscribe") {
				return id, task, err
			}
			return id, "", err
		}
		if strings.HasPrefix(rest, "message:") && r.Method == http.MethodPost {
			var b params
			if json.Unmarshal(readBody(r), &b) != nil {
				return "", "", nil
			}
			id, err := n.paramsContext(r.Context(), &b)
			return id, "", err
		}
	}
	return "", "", nil
}

// params is what the router reads of a request's parameters, in every
// spelling the server accepts.
type params struct {
	Message *struct {
		ContextID  string `json:"contextId"`
		ContextID2 string `json:"context_id"`
		TaskID     string `json:"taskId"`
		TaskID2    string `json:"task_id"`
	} `json:"message"`
	TaskID         string `json:"taskId"`
	ID             string `json:"id"`
	CommandContext string `json:"context_id"`
	// ContextID is a listing's context (context_id, the other
	// spelling, is CommandContext).
	ContextID string `json:"contextId"`
}

// paramsContext is the context a message or task request names.
func (n *Node) paramsContext(ctx context.Context, p *params) (string, error) {
	if m := p.Message; m != nil {
		if id := firstOf(m.ContextID, m.ContextID2); id != "" {
			return id, nil
		}
		if task := firstOf(m.TaskID, m.TaskID2); task != "" {
			return n.taskContext(ctx, task)
		}
		return "", nil
	}
	return n.taskContext(ctx, firstOf(p.TaskID, p.ID))
}

// taskContext is the context of a task; "" for an unknown task, which
// the handler refuses.
func (n *Node) taskContext(ctx context.Context, task string) (string, error) {
	if task == "" {
		return "", nil
	}
	id, err := n.cfg.Tasks.ContextOf(ctx, task)
	if errors.Is(err, a2a.ErrTaskNotFound) {
		return "", nil
	}
	return id, err
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// readBody reads the request's body and puts it back for the handler. A
// body that cannot be read whole (the guard's size limit) is handed on
// with its error, for the handler to answer.
func readBody(r *http.Request) []byte {
	body, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	var rd io.Reader = bytes.NewReader(body)
	if err != nil {
		rd = io.MultiReader(rd, errReader{err})
	}
	r.Body = io.NopCloser(rd)
	return body
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// routeError answers as the protocol's HTTP errors do: a JSON body
// {"error": "…"}.
func routeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// proxy forwards requests to other replicas.
type proxy struct {
	n  *Node
	rp *httputil.ReverseProxy
}

type targetKey struct{}

// target is where a request goes.
type target struct {
	url     *url.URL
	context string
	owner   Owner
	// next serves the request here after a takeover; body is its body,
	// replay whether it can be sent again; retried, that it was.
	next    http.Handler
	body    []byte
	replay  bool
	retried bool
}

func newProxy(n *Node, rt http.RoundTripper) *proxy {
	if rt == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		rt = t
	}
	return n.newProxyOver(rt, "cluster: forwarding failed", func(p *proxy, w http.ResponseWriter, r *http.Request, t *target, err error) {
		if unreached(err) && p.takeOver(w, r, t) {
			return
		}
		routeError(w, http.StatusBadGateway, notAnswered(t, err))
	})
}

// newProxyOver is a proxy to the target of each request's context, over
// rt, writing streams through as they come; fail answers a request the
// holder did not, after logging it with what.
func (n *Node) newProxyOver(rt http.RoundTripper, what string, fail func(p *proxy, w http.ResponseWriter, r *http.Request, t *target, err error)) *proxy {
	p := &proxy{n: n}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			t := pr.In.Context().Value(targetKey{}).(*target)
			pr.SetURL(t.url)
			pr.Out.Header.Set(ForwardedHeader, n.cfg.ID)
		},
		Transport:     rt,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			t := r.Context().Value(targetKey{}).(*target)
			n.log.Warn(what, "context", t.context, "replica", t.owner.ReplicaID, "url", t.owner.URL, "err", err)
			fail(p, w, r, t, err)
		},
	}
	return p
}

// notAnswered says that t's holder did not answer.
func notAnswered(t *target, err error) string {
	return fmt.Sprintf("context %s is served by replica %s at %s, which did not answer (%v): send the request again; if that replica is gone another one takes the context over",
		t.context, t.owner.ReplicaID, t.owner.URL, err)
}
