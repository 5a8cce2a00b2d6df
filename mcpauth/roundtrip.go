package mcpauth

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// RoundTripper returns a transport that does for any HTTP client what the
// SDK's streamable transport does with its OAuthHandler, for transports
// without that hook (the SDK's SSE client): each request carries h's
// token, and a 401 or 403 calls h.Authorize and, when it succeeds, sends
// the request once more (a request whose body cannot be replayed is not
// retried). base nil means http.DefaultTransport.
func RoundTripper(h auth.OAuthHandler, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &roundTripper{h: h, base: base}
}

type roundTripper struct {
	h    auth.OAuthHandler
	base http.RoundTripper
}

func (t *roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	req, resp, err := t.send(r, false)
	if err != nil || resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		return resp, err
	}
	if r.Body != nil && r.Body != http.NoBody && r.GetBody == nil {
		return resp, nil
	}
	if err := t.h.Authorize(r.Context(), req, resp); err != nil {
		return nil, err
	}
	_, resp, err = t.send(r, true)
	return resp, err
}

// send sends a copy of r with the current token.
func (t *roundTripper) send(r *http.Request, again bool) (*http.Request, *http.Response, error) {
	req := r.Clone(r.Context())
	if again && r.GetBody != nil {
		body, err := r.GetBody()
		if err != nil {
			return nil, nil, err
		}
		req.Body = body
	}
	ts, err := t.h.TokenSource(r.Context())
	if err != nil {
		return nil, nil, err
	}
	if ts != nil {
		tok, err := ts.Token()
		if err != nil {
			return nil, nil, err
		}
		if tok != nil && tok.AccessToken != "" {
			req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		}
	}
	resp, err := t.base.RoundTrip(req)
	return req, resp, err
}
