// Package fakegemini is a local fake of the Gemini API for agentry's tests.
//
// A [Server] speaks the wire protocol of the Gemini Developer API closely
// enough that the real google.golang.org/genai client (and everything agentry
// builds on it) can be pointed at it with [Server.ClientConfig]. Tests script
// the model's replies as a queue of [Step]s — streamed text, function calls,
// API errors, broken or hanging streams — and inspect every request the
// client sent with [Server.Requests].
//
// The fake is strict on purpose: a model request that finds no scripted step
// fails the test (and gets a 500), and steps still queued when the test ends
// fail it too, so a retry loop that calls the model once too often or once
// too rarely is never silent.
//
// A typical test:
//
//	s := fakegemini.New(t)
//	s.Enqueue(
//		fakegemini.RateLimitPerMinute(2*time.Second),
//		fakegemini.Call("read_file", map[string]any{"path": "go.mod"}),
//		fakegemini.Text("The module is ", "agentry."),
//	)
//	client := s.Client(ctx) // or genai.NewClient(ctx, s.ClientConfig())
//	// ... run the code under test ...
//	last := s.Requests()[2].Body.Contents // what the model was shown
//
// Nothing in the fake sleeps except [Slow] pacing and [Hang], which tests opt
// into.
package fakegemini

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genai"
)

// Model request methods, as they appear after the colon in the request path.
const (
	// MethodStream is the streaming generation method (with ?alt=sse).
	MethodStream = "streamGenerateContent"
	// MethodGenerate is the unary generation method.
	MethodGenerate = "generateContent"
	// MethodCountTokens is the token counting method.
	MethodCountTokens = "countTokens"
)

// DefaultAPIKey is the API key [Server.ClientConfig] uses when the server does
// not require a specific one.
const DefaultAPIKey = "fakegemini-key"

// defaultHangLimit bounds how long a [Hang] step waits for its client to go
// away. It only matters when a test forgets to cancel: the step then reports
// the mistake instead of stalling the test binary until its global timeout.
const defaultHangLimit = time.Minute

// Server is a fake Gemini API endpoint backed by an [httptest.Server].
// Create it with [New]; it is closed when the test ends.
type Server struct {
	// URL is the base URL of the server, e.g. "http://127.0.0.1:41234",
	// suitable for genai.HTTPOptions.BaseURL.
	URL string

	t           testing.TB
	srv         *httptest.Server
	apiKey      string
	hangLimit   time.Duration
	allowUnused bool
	respond     func(*Request) (Step, bool)
	// done is closed when the test ends so that paced and hanging handlers
	// return and the underlying server can shut down without waiting on them.
	done chan struct{}

	mu       sync.Mutex
	shared   []Step
	perModel map[string][]Step
	counts   []Step
	requests []Request
	// arrived is closed and replaced whenever a request is recorded, which
	// lets any number of WaitRequests callers wake up without polling.
	arrived chan struct{}

	// served, when set by this package's tests (see withServed), is called
	// as each handler returns; it proves that aborted requests do not leave
	// handlers behind.
	served func()
}

// Option configures a [Server].
type Option func(*Server)

// WithAPIKey makes the server require key in the x-goog-api-key header. A
// request without a key gets 401 UNAUTHENTICATED and a request with another
// key gets 403 PERMISSION_DENIED; neither consumes a scripted step nor fails
// the test, since rejecting bad credentials is the behaviour under test.
func WithAPIKey(key string) Option {
	return func(s *Server) { s.apiKey = key }
}

// WithHangLimit changes how long a [Hang] step waits for the client to give
// up before it fails the test and returns (one minute by default).
func WithHangLimit(d time.Duration) Option {
	return func(s *Server) { s.hangLimit = d }
}

// AllowUnused disables the end-of-test check that every scripted step was
// requested, for tests where the number of model calls is not the point
// (e.g. a generous supply of retryable errors).
func AllowUnused() Option {
	return func(s *Server) { s.allowUnused = true }
}

// WithResponder answers the generation requests that find no scripted step
// with respond's step, so that a test with many callers in any order (a
// batch spread over processes) can answer each request from its content:
// see [Request.LastUserText]. respond reporting false leaves the request
// unscripted, which fails the test. It is called from the server's
// handlers, concurrently.
func WithResponder(respond func(*Request) (Step, bool)) Option {
	return func(s *Server) { s.respond = respond }
}

// withServed sets a hook called as each handler returns. It is an option
// rather than a field the tests assign so that it is set before the server
// starts serving.
func withServed(f func()) Option {
	return func(s *Server) { s.served = f }
}

// New starts a fake Gemini server for the test t. The server is closed by
// t.Cleanup, which also reports scripted steps that were never requested.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{
		t:         t,
		hangLimit: defaultHangLimit,
		done:      make(chan struct{}),
		perModel:  make(map[string][]Step),
		arrived:   make(chan struct{}),
	}
	for _, opt := range opts {
		opt(s)
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.srv.URL
	t.Cleanup(s.close)
	return s
}

// close stops the server. Paced and hanging handlers are released first:
// httptest.Server.Close waits for every in-flight request.
func (s *Server) close() {
	close(s.done)
	s.srv.Close()
	if s.allowUnused {
		return
	}
	s.mu.Lock()
	var left []string
	for _, st := range s.shared {
		left = append(left, st.describe())
	}
	models := make([]string, 0, len(s.perModel))
	for m := range s.perModel {
		models = append(models, m)
	}
	slices.Sort(models)
	for _, m := range models {
		for _, st := range s.perModel[m] {
			left = append(left, m+": "+st.describe())
		}
	}
	for _, st := range s.counts {
		left = append(left, "countTokens: "+st.describe())
	}
	s.mu.Unlock()
	if len(left) > 0 {
		s.t.Errorf("fakegemini: %d scripted step(s) were never requested: %s", len(left), strings.Join(left, "; "))
	}
}

// ClientConfig returns a fresh genai client configuration that talks to this
// server through the Gemini API backend. It is fresh on every call because
// genai.NewClient fills in defaults on the config it is given.
func (s *Server) ClientConfig() *genai.ClientConfig {
	key := s.apiKey
	if key == "" {
		key = DefaultAPIKey
	}
	return &genai.ClientConfig{
		APIKey:      key,
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: s.URL},
	}
}

// Client returns a genai client for this server, failing the test if the
// client cannot be created. Call it from the test goroutine.
func (s *Server) Client(ctx context.Context) *genai.Client {
	s.t.Helper()
	c, err := genai.NewClient(ctx, s.ClientConfig())
	if err != nil {
		s.t.Fatalf("fakegemini: create genai client: %v", err)
	}
	return c
}

// Enqueue appends steps to the shared script. Each generateContent or
// streamGenerateContent request consumes one step, in order, from the
// requested model's own queue (see [Server.EnqueueFor]) or else from this one.
func (s *Server) Enqueue(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shared = append(s.shared, steps...)
}

// EnqueueFor appends steps to the script of one model, which is consumed
// before the shared script; fallback tests use it to give each model its own
// replies. The model may be given with or without its "models/" prefix.
func (s *Server) EnqueueFor(model string, steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := modelKey(model)
	s.perModel[m] = append(s.perModel[m], steps...)
}

// EnqueueCountTokens appends steps for countTokens requests, typically
// [TokenCount] or an error. countTokens requests never consume generation
// steps; when this queue is empty they are answered with an estimate of one
// token per four characters of text.
func (s *Server) EnqueueCountTokens(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts = append(s.counts, steps...)
}

// Pending reports how many scripted steps (of all queues) have not been
// requested yet.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.shared) + len(s.counts)
	for _, q := range s.perModel {
		n += len(q)
	}
	return n
}

// Requests returns every request received so far, in arrival order,
// including rejected and unscripted ones. The returned requests share their
// bodies with the server and must not be modified.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// WaitRequests blocks until at least n requests have arrived, then returns
// all requests received so far. Abort tests use it to cancel once the model
// call is in flight instead of sleeping. It returns ctx's error if ctx is
// done first.
func (s *Server) WaitRequests(ctx context.Context, n int) ([]Request, error) {
	for {
		s.mu.Lock()
		if len(s.requests) >= n {
			reqs := slices.Clone(s.requests)
			s.mu.Unlock()
			return reqs, nil
		}
		arrived := s.arrived
		s.mu.Unlock()
		select {
		case <-arrived:
		case <-ctx.Done():
			return nil, fmt.Errorf("fakegemini: waiting for %d request(s): %w", n, ctx.Err())
		}
	}
}

// record stores req and wakes WaitRequests callers. It returns the request's
// position (from 1), which also names the response.
func (s *Server) record(req Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
	close(s.arrived)
	s.arrived = make(chan struct{})
	return len(s.requests)
}

// next pops the step for req, reporting false when the script has none.
func (s *Server) next(req *Request) (Step, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.Method == MethodCountTokens {
		if len(s.counts) == 0 {
			return Step{}, false
		}
		st := s.counts[0]
		s.counts = s.counts[1:]
		return st, true
	}
	if q := s.perModel[req.Model]; len(q) > 0 {
		s.perModel[req.Model] = q[1:]
		if len(q) == 1 {
			delete(s.perModel, req.Model)
		}
		return q[0], true
	}
	if len(s.shared) > 0 {
		st := s.shared[0]
		s.shared = s.shared[1:]
		return st, true
	}
	return Step{}, false
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if s.served != nil {
		defer s.served()
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		// The client went away while sending; there is nobody to answer.
		return
	}
	req := Request{
		HTTPMethod: r.Method,
		Path:       r.URL.Path,
		RawQuery:   r.URL.RawQuery,
		APIKey:     r.Header.Get("x-goog-api-key"),
		Header:     r.Header.Clone(),
		Raw:        raw,
	}
	routeErr := req.parsePath()
	var bodyErr error
	if len(raw) > 0 {
		req.Body = new(RequestBody)
		bodyErr = json.Unmarshal(raw, req.Body)
	}
	n := s.record(req)

	switch {
	case routeErr != nil:
		s.t.Errorf("fakegemini: unsupported request %s %s: %v", r.Method, r.URL.RequestURI(), routeErr)
		writeError(w, http.StatusNotFound, ErrorBody(http.StatusNotFound, "NOT_FOUND", "fakegemini: "+routeErr.Error()))
		return
	case bodyErr != nil:
		s.t.Errorf("fakegemini: request #%d (%s): decode body: %v", n, req.Method, bodyErr)
		writeError(w, http.StatusBadRequest, ErrorBody(http.StatusBadRequest, "INVALID_ARGUMENT", "fakegemini: invalid JSON body: "+bodyErr.Error()))
		return
	}
	if s.apiKey != "" && req.APIKey != s.apiKey {
		if req.APIKey == "" {
			writeError(w, http.StatusUnauthorized, ErrorBody(http.StatusUnauthorized, "UNAUTHENTICATED",
				"Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."))
			return
		}
		writeError(w, http.StatusForbidden, ErrorBody(http.StatusForbidden, "PERMISSION_DENIED",
			"API key not valid. Please pass a valid API key.",
			ErrorInfo("API_KEY_INVALID", "googleapis.com", map[string]string{"service": "generativelanguage.googleapis.com"})))
		return
	}

	st, ok := s.next(&req)
	if !ok && s.respond != nil && req.Method != MethodCountTokens {
		st, ok = s.respond(&req)
	}
	if !ok {
		if req.Method == MethodCountTokens {
			writeJSON(w, map[string]any{"totalTokens": estimateRequestTokens(req.Body)})
			return
		}
		msg := fmt.Sprintf("fakegemini: script exhausted: no step left for request #%d, %s on model %q (%s)", n, req.Method, req.Model, req.summary())
		s.t.Errorf("%s", msg)
		writeError(w, http.StatusInternalServerError, ErrorBody(http.StatusInternalServerError, "INTERNAL", msg))
		return
	}
	p := &play{s: s, w: w, req: &req, n: n, step: st}
	p.run(r.Context())
}

// modelKey normalizes a model name to the form recorded in Request.Model.
func modelKey(model string) string {
	return strings.TrimPrefix(model, "models/")
}

// writeJSON sends a successful JSON reply.
func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, ErrorBody(http.StatusInternalServerError, "INTERNAL", "fakegemini: encode reply: "+err.Error()))
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// writeError sends body with an HTTP status, as the API does for errors.
func writeError(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}
