package mcpauth

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/agentry-dev/agentry/internal/safefs"
)

// ErrInsecureStore is returned when the token directory or a token file
// is a symbolic link, not a directory or regular file, or belongs to
// another user. Looser permissions on agentry's own files are repaired,
// not refused.
var ErrInsecureStore = errors.New("mcpauth: insecure token store")

// maxTokenFile bounds what is read from a token file.
const maxTokenFile = 1 << 20

// Token is a server's stored OAuth token with what refreshing it needs.
// Its JSON is gemini-cli's stored credential (serverName, token with
// accessToken, tokenType, refreshToken, scope and expiresAt in
// milliseconds, clientId, tokenUrl, mcpServerUrl, updatedAt) with the
// client secret a registration returned added.
type Token struct {
	// Server is the server's name in mcpServers.
	Server string `json:"serverName"`
	// Token is the token itself.
	Token TokenValue `json:"token"`
	// ClientID and ClientSecret are the client the token was issued to.
	ClientID     string `json:"clientId,omitempty"`
	ClientSecret string `json:"clientSecret,omitempty"`
	// TokenURL is the token endpoint refreshes go to.
	TokenURL string `json:"tokenUrl,omitempty"`
	// ServerURL is the MCP endpoint the token was obtained for.
	ServerURL string `json:"mcpServerUrl,omitempty"`
	// UpdatedAt is when the token was stored, in Unix milliseconds.
	UpdatedAt int64 `json:"updatedAt"`
}

// TokenValue is the token proper, gemini-cli's OAuthToken.
type TokenValue struct {
	AccessToken  string `json:"accessToken"`
	TokenType    string `json:"tokenType,omitempty"`
	RefreshToken string `json:"refreshToken,omitempty"`
	Scope        string `json:"scope,omitempty"`
	// ExpiresAt is in Unix milliseconds; 0 means the token does not
	// say when it expires.
	ExpiresAt int64 `json:"expiresAt,omitempty"`
}

// Expiry returns when the token expires, or the zero time.
func (t *Token) Expiry() time.Time {
	if t.Token.ExpiresAt == 0 {
		return time.Time{}
	}
	return time.UnixMilli(t.Token.ExpiresAt)
}

// LogValue keeps the token's secrets out of logs: only the server, the
// expiry and whether there is a refresh token are shown.
func (t *Token) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("server", t.Server),
		slog.Time("expires", t.Expiry()),
		slog.Bool("refreshable", t.Token.RefreshToken != ""),
	)
}

// String is LogValue's text, so that a token printed by mistake shows
// no secret.
func (t *Token) String() string {
	return fmt.Sprintf("mcpauth.Token{server=%q expires=%s refreshable=%t}", t.Server, t.Expiry().Format(time.RFC3339), t.Token.RefreshToken != "")
}

// Store keeps one token file per server in a directory (agentry's is
// ~/.agentry/mcp-oauth): the directory 0700, the files 0600, written
// atomically. A store whose directory or file is a symbolic link or is
// another user's is refused with ErrInsecureStore; looser permissions are
// tightened.
type Store struct {
	dir string
}

// NewStore returns the store in dir. Nothing is created until a token is
// saved.
func NewStore(dir string) *Store {
	return &Store{dir: dir}
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// plainName reports whether server is a plain file name: 1 to 100 of
// [A-Za-z0-9._-], not starting with a dot.
func plainName(server string) bool {
	if len(server) == 0 || len(server) > 100 || server[0] == '.' {
		return false
	}
	for i := 0; i < len(server); i++ {
		switch c := server[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}

// Path returns the file server's token is kept in. Names that are not
// plain file names are hex-encoded.
func (s *Store) Path(server string) string {
	name := server
	if !plainName(server) {
		name = "_" + hex.EncodeToString([]byte(server))
	}
	return filepath.Join(s.dir, name+".json")
}

// Load returns server's stored token, or (nil, nil) when there is none.
func (s *Store) Load(server string) (*Token, error) {
	if err := s.checkDir(false); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	p := s.Path(server)
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%w: %s is a symbolic link", ErrInsecureStore, p)
		}
		return nil, fmt.Errorf("mcpauth: reading token: %w", err)
	}
	defer f.Close()
	if err := checkPerm(f, p, 0o600, false); err != nil {
		return nil, err
	}
	var t Token
	dec := json.NewDecoder(&limitedReader{f: f, n: maxTokenFile})
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("mcpauth: token file %s does not parse: %w", p, err)
	}
	if t.Token.AccessToken == "" {
		return nil, fmt.Errorf("mcpauth: token file %s has no access token", p)
	}
	return &t, nil
}

// Save writes t as server's token, atomically and 0600
// (safefs.WritePrivateIn).
func (s *Store) Save(t *Token) error {
	if err := s.checkDir(true); err != nil {
		return err
	}
	data, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return fmt.Errorf("mcpauth: encoding token: %w", err)
	}
	if err := safefs.WritePrivateIn(s.dir, filepath.Base(s.Path(t.Server)), data); err != nil {
		return fmt.Errorf("mcpauth: saving token: %w", err)
	}
	return nil
}

// Delete removes server's token. It reports whether there was one.
func (s *Store) Delete(server string) (bool, error) {
	err := os.Remove(s.Path(server))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("mcpauth: deleting token: %w", err)
	}
	return true, nil
}

// lock takes the store's lock (flock of .lock in the directory), so that
// processes and sessions sharing the store refresh a token one at a time:
// a refresh token rotated by one is not then spent again by another. The
// returned function releases it.
func (s *Store) lock() (func(), error) {
	if err := s.checkDir(true); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(s.dir, ".lock"), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("mcpauth: locking the token store: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("mcpauth: locking the token store: %w", err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// checkDir makes sure the directory is a real directory of this user's
// with mode 0700, creating it (and its parent, 0700) when create is set.
func (s *Store) checkDir(create bool) error {
	fi, err := os.Lstat(s.dir)
	if errors.Is(err, fs.ErrNotExist) && create {
		if err := os.MkdirAll(filepath.Dir(s.dir), 0o700); err != nil {
			return fmt.Errorf("mcpauth: creating token directory: %w", err)
		}
		if err := os.Mkdir(s.dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("mcpauth: creating token directory: %w", err)
		}
		fi, err = os.Lstat(s.dir)
	}
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%w: %s is a symbolic link", ErrInsecureStore, s.dir)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", ErrInsecureStore, s.dir)
	}
	f, err := os.OpenFile(s.dir, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY, 0)
	if err != nil {
		return fmt.Errorf("mcpauth: opening token directory: %w", err)
	}
	defer f.Close()
	return checkPerm(f, s.dir, 0o700, true)
}

// checkPerm refuses a file of another user's and tightens a mode looser
// than want.
func checkPerm(f *os.File, path string, want fs.FileMode, dir bool) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("mcpauth: %w", err)
	}
	if !dir && !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file", ErrInsecureStore, path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%w: %s belongs to user %d", ErrInsecureStore, path, st.Uid)
	}
	if fi.Mode().Perm()&^want != 0 {
		slog.Warn("mcpauth: tightening permissions of the token store", "path", path, "was", fi.Mode().Perm(), "now", want)
		if err := f.Chmod(want); err != nil {
			return fmt.Errorf("%w: %s has mode %v and cannot be tightened: %w", ErrInsecureStore, path, fi.Mode().Perm(), err)
		}
	}
	return nil
}

// limitedReader reads at most n bytes of f.
type limitedReader struct {
	f *os.File
	n int64
}

func (r *limitedReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, errors.New("token file too large")
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	n, err := r.f.Read(p)
	r.n -= int64(n)
	return n, err
}
