package e2e

import (
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
)

// TestServeAnswersOnItsBoundAddress: a server bound to a loopback address
// other than 127.0.0.1 answers requests addressed to it (and to
// localhost), instead of refusing every one for its Host.
func TestServeAnswersOnItsBoundAddress(t *testing.T) {
	for _, host := range []string{"127.0.0.2", "::1"} {
		t.Run(host, func(t *testing.T) {
			ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
			if err != nil {
				if host == "::1" && os.Getenv("CI") == "" {
					t.Skipf("this machine cannot listen on [::1]: %v", err)
				}
				t.Fatalf("listen on %s: %v", host, err)
			}
			_ = ln.Close()
			e := newEnv(t)
			const token = "e2e-bound-address-token-0123456789abcdef"
			e.set("AGENTRY_A2A_TOKEN=" + token)
			srv := e.serve("--host", host, "--port", "0", "-w", e.ws, "-m", "replay:"+quickstart())
			if want := "http://" + net.JoinHostPort(host, ""); !strings.HasPrefix(srv.url, want) {
				t.Fatalf("listening on %s, want %s…", srv.url, want)
			}
			_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.url, "http://"))
			for _, hostHeader := range []string{"", "localhost:" + port} {
				req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.url+"/",
					strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+token)
				if hostHeader != "" {
					req.Host = hostHeader
				}
				code, body, _ := httpDo(t, req)
				if code != http.StatusOK || !strings.Contains(string(body), "task not found") {
					t.Errorf("GetTask to %s (Host %q): HTTP %d %s, want 200 and task not found", srv.url, req.Host, code, body)
				}
			}
		})
	}
}

// TestServeRefusesWeakTokenOffLoopback: a server reachable from other
// machines refuses to start with a token that can be guessed, and says
// how to make one; a strong token starts it.
func TestServeRefusesWeakTokenOffLoopback(t *testing.T) {
	for _, weak := range []string{"x", "short-token-123", strings.Repeat("a", 64), strings.Repeat("0123456789abcdef", 4)} {
		e := newEnv(t)
		e.set("AGENTRY_A2A_TOKEN=" + weak)
		r := e.run("", "serve", "--host", "0.0.0.0", "--port", "0", "-w", e.ws, "-m", "replay:"+quickstart())
		if r.code == 0 || strings.Contains(r.stderr, "listening on") || !strings.Contains(r.stderr, "openssl rand -hex 32") ||
			!strings.Contains(r.stderr, "AGENTRY_A2A_TOKEN") {
			t.Errorf("--host 0.0.0.0 with a %d-character weak token: exit %d, stderr:\n%s", len(weak), r.code, r.stderr)
		}
		if len(weak) > 8 && strings.Contains(r.stderr, weak) {
			t.Errorf("the refusal shows the token:\n%s", r.stderr)
		}
	}
	e := newEnv(t)
	e.set("AGENTRY_A2A_TOKEN=3f9c2a7e5b1d4086a9e7c3b2f1d0e8a74c6b5a3921f0e8d7c6b5a4f3e2d1c0b9")
	srv := e.serve("--host", "0.0.0.0", "--port", "0", "-w", e.ws, "-m", "replay:"+quickstart())
	if code := srv.interrupt(); code != 0 {
		t.Errorf("agentry serve with a strong token exited %d; stderr:\n%s", code, srv.errText())
	}
}
