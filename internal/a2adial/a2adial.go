// Package a2adial holds how agentry's A2A clients reach the interfaces an
// agent card names: the gRPC target a card's URL stands for and whether
// it is dialled in plain text (GRPCTarget, Dial), and the HTTP transport
// that hands a2a-go the reason of a refused JSON-RPC stream
// (RefusedStreams).
package a2adial

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// GRPCTarget turns a card's gRPC URL into a target for grpc.NewClient and
// says whether the connection is plain text. Cards spell the URL as
// host:port, as a gRPC target URI (dns:///host:port) or as an HTTP-style
// URL (http://host:port, grpcs://host); gRPC itself dials only the first
// two. The connection is TLS, except to a loopback address, where a local
// agent rarely has a certificate and nothing leaves the machine, or when
// the URL's scheme says which (http/grpc: plain, https/grpcs: TLS).
func GRPCTarget(raw string) (target string, plain bool) {
	u, err := url.Parse(raw)
	if err == nil && u.Host != "" {
		switch u.Scheme {
		case "http", "grpc", "https", "grpcs":
			secure := u.Scheme == "https" || u.Scheme == "grpcs"
			port := u.Port()
			if port == "" {
				port = map[bool]string{true: "443", false: "80"}[secure]
			}
			return net.JoinHostPort(u.Hostname(), port), !secure
		}
	}
	if err == nil && (u.Scheme == "unix" || u.Scheme == "unix-abstract") {
		return raw, true
	}
	// host:port, or a target URI whose endpoint is its path
	// (dns:///host:port, passthrough:///host:port).
	endpoint := raw
	if err == nil && u.Scheme != "" && u.Opaque == "" {
		endpoint = strings.TrimPrefix(u.Path, "/")
	}
	return raw, isLoopback(endpoint)
}

// isLoopback reports whether a gRPC endpoint ("host:port") is on this
// machine.
func isLoopback(target string) bool {
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		host = target
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Dial opens a gRPC client connection to a card's gRPC URL with the
// credentials GRPCTarget chooses. Like grpc.NewClient it connects lazily:
// an unreachable server fails the first call.
func Dial(cardURL string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	target, plain := GRPCTarget(cardURL)
	creds := credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})
	if plain {
		creds = insecure.NewCredentials()
	}
	return grpc.NewClient(target, append([]grpc.DialOption{grpc.WithTransportCredentials(creds)}, opts...)...)
}

// maxRefusal bounds the body of a refused stream read into memory.
const maxRefusal = 1 << 20

// RefusedStreams wraps an HTTP transport for a2a-go's JSON-RPC client. A
// JSON-RPC server may refuse a streaming request with an HTTP error whose
// body is the JSON-RPC error (agentry serve does); a2a-go's client reads
// only the status of a refused stream, so the error's code and message
// would be lost. The wrapper hands a2a-go such a refusal as a stream whose
// one event is the error, which a2a-go reads as the call's error.
// Everything else passes untouched.
func RefusedStreams(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return refusedStreams{base: base}
}

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
