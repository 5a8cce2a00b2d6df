package chatapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"
)

// Config configures a Client.
type Config struct {
	// BaseURL is the API root, such as "https://api.openai.com/v1";
	// "chat/completions" is resolved against it as a directory. Required.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>". Empty sends no
	// Authorization header, for local servers that need none.
	APIKey string
	// UserAgent is sent as the User-Agent header when set.
	UserAgent string
	// HTTPClient sends every request; nil means http.DefaultClient.
	HTTPClient *http.Client
}

// Client sends chat completion requests. It is safe for concurrent use.
type Client struct {
	endpoint  string
	apiKey    string
	userAgent string
	hc        *http.Client
}

// New returns a Client for cfg. It fails when BaseURL is not an absolute
// http or https URL.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("base URL %q: %w", cfg.BaseURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("base URL %q: want an absolute http or https URL", cfg.BaseURL)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{
		endpoint:  u.ResolveReference(&url.URL{Path: "chat/completions"}).String(),
		apiKey:    cfg.APIKey,
		userAgent: cfg.UserAgent,
		hc:        hc,
	}, nil
}

// Endpoint returns the URL requests are sent to.
func (c *Client) Endpoint() string { return c.endpoint }

// Create sends req for one non-streamed completion.
func (c *Client) Create(ctx context.Context, req *Request) (*Completion, error) {
	r := *req
	r.Stream = false
	res, err := c.do(ctx, &r, "application/json")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var out Completion
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("reading the completion: %w", err)
	}
	return &out, nil
}

// Stream sends req with "stream": true when the sequence is first iterated
// and yields each chunk of the response. The sequence ends at the "[DONE]"
// event or at the end of the body without one, or with one error: an *Error
// for an HTTP error status, a *StreamError for an error event, or a
// transport or decoding error. Stopping the iteration closes the response.
func (c *Client) Stream(ctx context.Context, req *Request) iter.Seq2[*Chunk, error] {
	return func(yield func(*Chunk, error) bool) {
		r := *req
		r.Stream = true
		res, err := c.do(ctx, &r, "text/event-stream")
		if err != nil {
			yield(nil, err)
			return
		}
		defer res.Body.Close()
		ev := newEvents(res.Body)
		for {
			data, ok := ev.next()
			if !ok {
				break
			}
			if bytes.HasPrefix(data, []byte("[DONE]")) {
				// The answer is complete: end the turn now rather than
				// wait for a server or proxy to close the body.
				return
			}
			var ch Chunk
			if err := json.Unmarshal(data, &ch); err != nil {
				yield(nil, fmt.Errorf("reading a stream event: %w", err))
				return
			}
			if len(ch.Error) > 0 && !bytes.Equal(ch.Error, []byte("null")) {
				yield(nil, &StreamError{Data: ch.Error})
				return
			}
			if !yield(&ch, nil) {
				return
			}
		}
		if err := ev.Err(); err != nil {
			yield(nil, err)
		}
	}
}

// do sends req and returns the response of a 2xx or 3xx status; any other
// status is returned as an *Error.
func (c *Client) do(ctx context.Context, req *Request, accept string) (*http.Response, error) {
	body, err := marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encoding the request: %w", err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", accept)
	if c.userAgent != "" {
		hr.Header.Set("User-Agent", c.userAgent)
	}
	if c.apiKey != "" {
		hr.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	res, err := c.hc.Do(hr)
	if err != nil {
		return nil, err
	}
	if res.StatusCode >= 400 {
		defer res.Body.Close()
		return nil, newError(hr, res)
	}
	return res, nil
}

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 1 << 20

// Error is an HTTP error status from the server. Header keeps Retry-After
// and Retry-After-Ms; Code, Type, Param and Message come from the body's
// {"error": {...}} object when it has one (OpenAI's shape; vLLM, Ollama and
// others answer in other shapes, which Body still holds).
type Error struct {
	Method     string
	URL        string
	StatusCode int
	Header     http.Header
	// Body is the response body (its first MiB).
	Body []byte
	// Code is the error's code, as text even when the server sent a number.
	Code    string
	Type    string
	Param   string
	Message string
	// detail is the error member's JSON, or else the start of the body.
	detail string
}

func newError(req *http.Request, res *http.Response) *Error {
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	e := &Error{
		Method:     req.Method,
		URL:        req.URL.String(),
		StatusCode: res.StatusCode,
		Header:     res.Header,
		Body:       body,
	}
	var wrapper struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &wrapper) == nil && len(wrapper.Error) > 0 {
		e.detail = string(wrapper.Error)
		var fields struct {
			Code    String `json:"code"`
			Type    String `json:"type"`
			Param   String `json:"param"`
			Message String `json:"message"`
		}
		var text string
		switch {
		case json.Unmarshal(wrapper.Error, &text) == nil:
			e.Message = text // {"error": "…"}, as Ollama answers
		case json.Unmarshal(wrapper.Error, &fields) == nil:
			e.Code, e.Type, e.Param, e.Message = string(fields.Code), string(fields.Type), string(fields.Param), string(fields.Message)
		}
		return e
	}
	e.detail = clip(strings.TrimSpace(string(body)), 500)
	return e
}

// Error returns the request, the status and the error detail, such as
// `POST "https://api.openai.com/v1/chat/completions": 429 Too Many Requests
// {"message": "…", "type": "requests", …}`.
func (e *Error) Error() string {
	s := fmt.Sprintf("%s %q: %d %s", e.Method, e.URL, e.StatusCode, http.StatusText(e.StatusCode))
	if e.detail != "" {
		s += " " + e.detail
	}
	return s
}

// StreamError is an error event in a stream: a server that fails after
// answering 200 sends {"error": {...}} as an event.
type StreamError struct {
	// Data is the event's error member: an object or a string.
	Data json.RawMessage
}

// Error returns the event's error member, or its message when it is a
// string.
func (e *StreamError) Error() string {
	var s string
	if json.Unmarshal(e.Data, &s) == nil {
		return "received error while streaming: " + s
	}
	return "received error while streaming: " + string(e.Data)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary.
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
