package guard

import (
	"errors"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestHostsFor: the bound address is an allowed Host, with the loopback
// names, in the spellings clients use.
func TestHostsFor(t *testing.T) {
	cases := []struct {
		bind string
		port int
		want []string
		not  []string
	}{
		{bind: "127.0.0.2", port: 8080, want: []string{"127.0.0.2:8080", "localhost:8080", "127.0.0.1:8080", "[::1]:8080"}},
		{bind: "::1", port: 8080, want: []string{"[::1]:8080", "localhost:8080"}},
		{bind: "[::1]", port: 8080, want: []string{"[::1]:8080"}},
		{bind: "0:0:0:0:0:0:0:1", port: 8080, want: []string{"[::1]:8080", "[0:0:0:0:0:0:0:1]:8080"}},
		{bind: "localhost", port: 8080, want: []string{"localhost:8080"}},
		{bind: "192.0.2.7", port: 80, want: []string{"192.0.2.7:80", "192.0.2.7", "localhost"}},
		{bind: "2001:db8::7", port: 80, want: []string{"[2001:db8::7]:80", "[2001:db8::7]"}},
		{bind: "0.0.0.0", port: 8080, want: []string{"127.0.0.1:8080"}, not: []string{"0.0.0.0:8080"}},
		{bind: "::", port: 8080, want: []string{"[::1]:8080"}, not: []string{"[::]:8080"}},
	}
	for _, c := range cases {
		got := HostsFor(c.bind, c.port)
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("HostsFor(%q, %d) = %q, lacks %q", c.bind, c.port, got, w)
			}
		}
		for _, n := range c.not {
			if slices.Contains(got, n) {
				t.Errorf("HostsFor(%q, %d) = %q, has %q", c.bind, c.port, got, n)
			}
		}
		if _, err := New(Config{Token: testToken, AllowedHosts: got}); err != nil {
			t.Errorf("New refuses HostsFor(%q, %d): %v", c.bind, c.port, err)
		}
	}
}

// TestHostsForServesTheBoundAddress: a real server bound to 127.0.0.2
// (Linux routes all of 127/8 to lo) and to [::1] answers a request
// addressed to its own address and one addressed to localhost.
func TestHostsForServesTheBoundAddress(t *testing.T) {
	for _, bind := range []string{"127.0.0.2", "::1"} {
		ln, err := net.Listen("tcp", net.JoinHostPort(bind, "0"))
		if err != nil {
			if bind == "::1" && os.Getenv("CI") == "" {
				t.Logf("cannot listen on [::1], its case is not checked here: %v", err)
				continue
			}
			t.Fatalf("listen on %s: %v", bind, err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		g, err := New(Config{Token: testToken, AllowedHosts: HostsFor(bind, port)})
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
		url := "http://" + net.JoinHostPort(bind, strconv.Itoa(port)) + "/"
		for _, host := range []string{"", "localhost:" + strconv.Itoa(port)} {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+testToken)
			if host != "" {
				req.Host = host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s (Host %q): HTTP %d, want 200", url, req.Host, resp.StatusCode)
			}
		}
	}
}

// TestCheckStrength: tokens a person types are refused; generated ones
// pass.
func TestCheckStrength(t *testing.T) {
	gen, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{gen, "3f9c2a7e5b1d4086a9e7c3b2f1d0e8a74c6b5a3921f0e8d7c6b5a4f3e2d1c0b9", "0b8f3d1e9a6c2475e8d0c1b3a7f69e24"} {
		if err := CheckStrength(ok); err != nil {
			t.Errorf("CheckStrength(%q): %v", ok, err)
		}
	}
	for _, c := range []struct{ token, why string }{
		{"x", "shorter"},
		{strings.Repeat("z", MinTokenLength-1), "shorter"},
		{strings.Repeat("a", 64), "different characters"},
		{strings.Repeat("ab12", 10), "different characters"},
		{strings.Repeat("0123456789abcdef", 4), "repeats"},
		{"passwordpassword1234passwordpassword1234", "repeats"},
	} {
		err := CheckStrength(c.token)
		if !errors.Is(err, ErrWeakToken) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("CheckStrength(%q) = %v, want %v saying %q", c.token, err, ErrWeakToken, c.why)
		}
		if err != nil && len(c.token) > 1 && strings.Contains(err.Error(), c.token) {
			t.Errorf("CheckStrength quotes the token: %v", err)
		}
	}
}
