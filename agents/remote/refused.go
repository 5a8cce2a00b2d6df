package remote

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// maxRefusal bounds the body of a refused stream read into memory.
const maxRefusal = 1 << 20

// refusedStreams is a remote agent's HTTP transport. A JSON-RPC server may
// refuse a streaming request with an HTTP error whose body is the JSON-RPC
// error (agentry serve does); a2a-go's client reads only the status of a
// refused stream, so the error's code and message would be lost. It hands
// a2a-go such a refusal as a stream whose one event is the error, which
// a2a-go reads as the call's error. Everything else passes untouched.
type refusedStreams struct{ base http.RoundTripper }

func (t refusedStreams) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil || resp.StatusCode < 400 || !strings.HasPrefix(r.Header.Get("Accept"), "text/event-stream") ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRefusal))
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var env struct {
		JSONRPC string          `json:"jsonrpc"`
		Error   json.RawMessage `json:"error"`
	}
	var line bytes.Buffer
	if json.Unmarshal(body, &env) != nil || env.JSONRPC != "2.0" || len(env.Error) == 0 || json.Compact(&line, body) != nil {
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	event := append(append([]byte("data: "), line.Bytes()...), "\n\n"...)
	resp.Status, resp.StatusCode = "200 OK", http.StatusOK
	resp.Header = resp.Header.Clone()
	resp.Header.Set("Content-Type", "text/event-stream")
	resp.Header.Del("Content-Length")
	resp.ContentLength = int64(len(event))
	resp.Body = io.NopCloser(bytes.NewReader(event))
	return resp, nil
}
