package mcpauth_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/mcpauth"
)

func token(server string, expires time.Time, refresh string) *mcpauth.Token {
	t := &mcpauth.Token{Server: server, Token: mcpauth.TokenValue{AccessToken: "at-secret", RefreshToken: refresh}, TokenURL: "https://as.example/token"}
	if !expires.IsZero() {
		t.Token.ExpiresAt = expires.UnixMilli()
	}
	return t
}

func TestStoreRoundTripAndModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "agentry", "mcp-oauth")
	s := mcpauth.NewStore(dir)
	if tok, err := s.Load("a"); tok != nil || err != nil {
		t.Fatalf("empty store: %v %v", tok, err)
	}
	if err := s.Save(token("a", time.Time{}, "")); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{filepath.Dir(dir): 0o700, dir: 0o700, s.Path("a"): 0o600} {
		if got := mode(t, p); got != want {
			t.Errorf("%s: mode %v, want %v", p, got, want)
		}
	}
	tok, err := s.Load("a")
	if err != nil || tok.Token.AccessToken != "at-secret" {
		t.Fatalf("load: %v %v", tok, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("directory holds %d entries, want the token file only", len(entries))
	}
	if ok, err := s.Delete("a"); !ok || err != nil {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if ok, err := s.Delete("a"); ok || err != nil {
		t.Fatalf("second delete: %v %v", ok, err)
	}
}

func TestStoreFileNames(t *testing.T) {
	s := mcpauth.NewStore("/x")
	for name, want := range map[string]string{
		"github":                 "/x/github.json",
		"my.server":              "/x/my.server.json",
		"..":                     "/x/_2e2e.json",
		"a/b":                    "/x/_612f62.json",
		".hidden":                "/x/_2e68696464656e.json",
		"spaces ok?":             "/x/_737061636573206f6b3f.json",
		"-_x":                    "/x/-_x.json",
		"é":                      "/x/_c3a9.json",
		"":                       "/x/_.json",
		strings.Repeat("a", 100): "/x/" + strings.Repeat("a", 100) + ".json",
		strings.Repeat("a", 101): "/x/_" + strings.Repeat("61", 101) + ".json",
	} {
		if got := s.Path(name); got != want {
			t.Errorf("Path(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestStoreRepairsLoosePermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mcp-oauth")
	s := mcpauth.NewStore(dir)
	if err := s.Save(token("a", time.Time{}, "")); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	os.Chmod(s.Path("a"), 0o644)
	if tok, err := s.Load("a"); err != nil || tok == nil {
		t.Fatalf("load: %v %v", tok, err)
	}
	if mode(t, dir) != 0o700 || mode(t, s.Path("a")) != 0o600 {
		t.Fatalf("modes not repaired: %v %v", mode(t, dir), mode(t, s.Path("a")))
	}
}

func TestStoreRefusesSymlinks(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "mcp-oauth")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	s := mcpauth.NewStore(link)
	if err := s.Save(token("a", time.Time{}, "")); !errors.Is(err, mcpauth.ErrInsecureStore) {
		t.Fatalf("save into a symlinked directory: %v", err)
	}

	dir := filepath.Join(root, "ok")
	s = mcpauth.NewStore(dir)
	if err := s.Save(token("b", time.Time{}, "")); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(root, "elsewhere.json")
	os.WriteFile(other, []byte(`{"serverName":"a","token":{"accessToken":"x"}}`), 0o600)
	if err := os.Symlink(other, s.Path("a")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("a"); !errors.Is(err, mcpauth.ErrInsecureStore) {
		t.Fatalf("load of a symlinked file: %v", err)
	}
	if st := s.Status("a", time.Now()); st.State != mcpauth.StateInvalid || !strings.Contains(st.Problem, "symbolic link") {
		t.Fatalf("status %+v", st)
	}
}

func TestStoreStatus(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	s := mcpauth.NewStore(t.TempDir() + "/d")
	for _, tc := range []struct {
		tok  *mcpauth.Token
		want mcpauth.State
	}{
		{nil, mcpauth.StateNone},
		{token("s", time.Time{}, ""), mcpauth.StateValid},
		{token("s", now.Add(time.Hour), ""), mcpauth.StateValid},
		{token("s", now.Add(4*time.Minute), ""), mcpauth.StateExpired},
		{token("s", now.Add(-time.Hour), "rt"), mcpauth.StateRefreshable},
		{token("s", now.Add(-time.Hour), ""), mcpauth.StateExpired},
	} {
		s.Delete("s")
		if tc.tok != nil {
			if err := s.Save(tc.tok); err != nil {
				t.Fatal(err)
			}
		}
		if got := s.Status("s", now); got.State != tc.want {
			t.Errorf("%v: state %q, want %q", tc.tok, got.State, tc.want)
		}
	}
	os.WriteFile(s.Path("bad"), []byte("{"), 0o600)
	if got := s.Status("bad", now); got.State != mcpauth.StateInvalid {
		t.Errorf("unparsable file: %+v", got)
	}
}
