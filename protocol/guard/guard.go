// Package guard is the security middleware in front of every agentry HTTP
// endpoint: the A2A JSON-RPC and SSE binding, the REST binding, gRPC served
// through grpc.Server.ServeHTTP, and the agent card.
//
// An agentry server can run shell commands, so anything that can talk to it
// can run commands. It listens on loopback by default, which keeps remote
// hosts out but not two other attackers: a web page in the user's browser
// (cross-site requests, DNS rebinding, cross-site WebSocket) and other users
// of the same machine. The guard follows the model of gemini-cli's IDE
// companion server, checking every request in this order:
//
//  1. Host: the Host header (the :authority for HTTP/2 and gRPC) must be one
//     of Config.AllowedHosts. A DNS-rebound page reaches the loopback
//     address under the attacker's host name, so this is what stops it.
//  2. Origin: browsers send Origin on cross-site requests and on every
//     WebSocket handshake; a request carrying one is refused unless the
//     origin is in Config.AllowedOrigins. Allowed origins get CORS headers
//     and their preflights are answered here.
//  3. Token: every request except a GET or HEAD of a Config.PublicPaths path
//     must carry "Authorization: Bearer <token>". This keeps out other local
//     users and any page that got past the checks above.
//  4. Body size: bodies larger than Config.MaxBodyBytes are refused with 413.
//     A gRPC call's body is all its messages: a stream whose messages
//     together pass the limit ends ResourceExhausted.
//
// Refusals are plain HTTP JSON errors ({"error": "..."}) except for gRPC
// requests, which get a gRPC trailers-only response so that gRPC clients
// see a proper status code. Mapping errors onto JSON-RPC is left to the
// protocol handlers behind the guard.
package guard

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxBodyBytes is the request body cap used when Config.MaxBodyBytes
// is zero. A2A requests are JSON messages; 4 MiB also matches grpc-go's
// default maximum received message size.
const DefaultMaxBodyBytes int64 = 4 << 20

// Config configures a Guard.
type Config struct {
	// Token is the bearer token every non-public request must present. It is
	// required, and must be printable ASCII without spaces so that it can be
	// sent in an Authorization header. NewToken makes a suitable one.
	Token string
	// AllowedHosts are the Host header values accepted, compared
	// case-insensitively: "host:port", or a bare host for clients that omit
	// a default port. IPv6 literals are written in brackets ("[::1]:8080").
	// At least one is required; New adds none itself (see LoopbackHosts).
	AllowedHosts []string
	// AllowedOrigins are the browser origins ("scheme://host[:port]") allowed
	// to call the server. By default there are none, and any request that
	// carries an Origin header is refused.
	AllowedOrigins []string
	// PublicPaths are exact URL paths served to GET and HEAD without a token,
	// such as the agent card at /.well-known/agent-card.json. The Host and
	// Origin checks still apply to them, and other methods still need the
	// token: a public path is public for reading only.
	PublicPaths []string
	// MaxBodyBytes caps request bodies; zero means DefaultMaxBodyBytes.
	// Larger bodies are refused with 413 (ResourceExhausted for gRPC).
	MaxBodyBytes int64
	// Logger receives a Warn record for each refused request; nil is
	// slog.Default(). Tokens and Authorization headers are never logged.
	Logger *slog.Logger
}

// Guard checks requests before they reach the wrapped handler. It is
// immutable after New and safe for concurrent use.
type Guard struct {
	tokenSum [sha256.Size]byte
	hosts    []string
	origins  []string
	public   []string
	maxBody  int64
	log      *slog.Logger
}

// New validates cfg and returns a Guard.
func New(cfg Config) (*Guard, error) {
	if cfg.Token == "" {
		return nil, errors.New("guard: a bearer token is required")
	}
	if !validToken(cfg.Token) {
		// Say nothing about the token's content: it is a secret.
		return nil, errors.New("guard: the bearer token must be printable ASCII without spaces")
	}
	if len(cfg.AllowedHosts) == 0 {
		return nil, errors.New("guard: no allowed hosts: every request would be refused")
	}
	g := &Guard{
		tokenSum: sha256.Sum256([]byte(cfg.Token)),
		maxBody:  cfg.MaxBodyBytes,
		log:      cfg.Logger,
	}
	for _, h := range cfg.AllowedHosts {
		if err := validateHost(h); err != nil {
			return nil, fmt.Errorf("guard: allowed host %q: %w", h, err)
		}
		g.hosts = append(g.hosts, h)
	}
	for _, o := range cfg.AllowedOrigins {
		norm, err := normalizeOrigin(o)
		if err != nil {
			return nil, fmt.Errorf("guard: allowed origin %q: %w", o, err)
		}
		g.origins = append(g.origins, norm)
	}
	for _, p := range cfg.PublicPaths {
		if !strings.HasPrefix(p, "/") {
			return nil, fmt.Errorf("guard: public path %q: must start with /", p)
		}
		g.public = append(g.public, p)
	}
	switch {
	case g.maxBody < 0:
		return nil, fmt.Errorf("guard: negative body limit %d", g.maxBody)
	case g.maxBody == 0:
		g.maxBody = DefaultMaxBodyBytes
	}
	if g.log == nil {
		g.log = slog.Default()
	}
	return g, nil
}

// NewToken returns a fresh bearer token: 32 bytes from crypto/rand, encoded
// as unpadded base64url (43 characters, safe in headers and URLs alike).
func NewToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("guard: reading random bytes: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// MinTokenLength is the fewest characters CheckStrength accepts: 32 hex
// digits are 128 random bits, as many as a guess must match.
const MinTokenLength = 32

// ErrWeakToken is returned by CheckStrength for a token that can be
// guessed.
var ErrWeakToken = errors.New("the bearer token is too weak")

// CheckStrength refuses a token too weak for a server other machines can
// reach: shorter than MinTokenLength, made of fewer than 8 different
// characters, or a short run repeated ("abcabc…"). A token cannot be
// measured for randomness; these catch what people type by hand, and
// anything made by a random generator (NewToken, "openssl rand -hex 32")
// passes. The error never quotes the token.
func CheckStrength(token string) error {
	distinct := map[byte]bool{}
	for i := 0; i < len(token); i++ {
		distinct[token[i]] = true
	}
	switch {
	case len(token) < MinTokenLength:
		return fmt.Errorf("%w: it is shorter than %d characters", ErrWeakToken, MinTokenLength)
	case len(distinct) < 8:
		return fmt.Errorf("%w: it uses fewer than 8 different characters", ErrWeakToken)
	case period(token) <= len(token)/2:
		return fmt.Errorf("%w: it repeats a shorter run of characters", ErrWeakToken)
	}
	return nil
}

// period returns the length of the shortest run s repeats (len(s) if it
// repeats none): the smallest p with s[i] == s[i+p] throughout.
func period(s string) int {
	for p := 1; p < len(s); p++ {
		if s[p:] == s[:len(s)-p] {
			return p
		}
	}
	return len(s)
}

// LoopbackHosts returns the Host values a client uses to reach a server
// listening on loopback at port: localhost, 127.0.0.1 and [::1], each with
// the port. Pass the port actually bound, not 0. On port 80 the bare names
// are included as well, because clients leave the default port out of Host.
func LoopbackHosts(port int) []string {
	names := []string{"localhost", "127.0.0.1", "[::1]"}
	p := strconv.Itoa(port)
	hosts := make([]string, 0, 2*len(names))
	for _, n := range names {
		hosts = append(hosts, n+":"+p)
	}
	if port == 80 {
		hosts = append(hosts, names...)
	}
	return hosts
}

// HostsFor returns the Host values a client uses to reach a server bound
// to bind at port: LoopbackHosts(port), and the bound address itself
// unless it is unspecified (0.0.0.0, ::), an IPv6 literal in brackets.
// Both the address as written and its canonical form are included
// ("0:0:0:0:0:0:0:1" and "[::1]"). On port 80 the bare names are included
// as well. Pass the port actually bound, not 0.
func HostsFor(bind string, port int) []string {
	hosts := LoopbackHosts(port)
	add := func(h string) {
		hp := net.JoinHostPort(h, strconv.Itoa(port))
		for _, have := range hosts {
			if strings.EqualFold(have, hp) {
				return
			}
		}
		hosts = append(hosts, hp)
		if port == 80 {
			if strings.Contains(h, ":") {
				h = "[" + h + "]"
			}
			hosts = append(hosts, h)
		}
	}
	bind = strings.TrimSuffix(strings.TrimPrefix(bind, "["), "]")
	if bind == "" {
		return hosts
	}
	if ip, err := netip.ParseAddr(bind); err == nil {
		if ip.IsUnspecified() || ip.Zone() != "" {
			// A zoned link-local address has no portable Host spelling:
			// name it with --allowed-host.
			return hosts
		}
		add(ip.Unmap().String())
	}
	add(bind)
	return hosts
}

// CORS values. The allowed headers are those A2A clients send besides the
// CORS-safelisted ones; A2A-Extensions is exposed because servers answer
// with the extensions they activated.
const (
	corsAllowHeaders  = "Authorization, Content-Type, A2A-Extensions, A2A-Version, X-A2A-Extensions"
	corsAllowMethods  = "GET, POST, DELETE, OPTIONS" // DELETE: the REST binding deletes push configs
	corsExposeHeaders = "A2A-Extensions"
)

// gRPC status codes used in refusals (google.golang.org/grpc/codes); kept
// as numbers so the guard does not depend on grpc.
const (
	grpcPermissionDenied  = 7
	grpcResourceExhausted = 8
	grpcUnauthenticated   = 16
)

// bearerChallenge is the WWW-Authenticate value of 401 responses (RFC 6750).
const bearerChallenge = `Bearer realm="agentry"`

// refusal is why a request is turned away, in both HTTP and gRPC terms.
type refusal struct {
	status    int    // HTTP status
	grpcCode  int    // gRPC status code for gRPC requests
	msg       string // safe to send and log: never contains a token
	challenge string // WWW-Authenticate value, for 401
}

// Wrap returns a handler that checks each request and passes the allowed
// ones to next.
func (g *Guard) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.serve(w, r, next)
	})
}

func (g *Guard) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if !g.hostAllowed(r.Host) {
		msg := "host not allowed: the request has no Host header"
		if r.Host != "" {
			msg = fmt.Sprintf("host not allowed: %s; if you reach this server under that name, start it with --allowed-host %s",
				quote(r.Host), quote(r.Host))
		}
		g.refuse(w, r, refusal{status: http.StatusForbidden, grpcCode: grpcPermissionDenied, msg: msg})
		return
	}

	origin, ok := g.checkOrigin(r)
	if !ok {
		g.refuse(w, r, refusal{
			status:   http.StatusForbidden,
			grpcCode: grpcPermissionDenied,
			msg: fmt.Sprintf("origin not allowed: %s; browser pages may call this server only if it is started with --allowed-origin <origin>",
				quote(strings.Join(r.Header.Values("Origin"), ", "))),
		})
		return
	}
	if origin != "" {
		// Set before the token check so that an allowed page can read a
		// 401 or 413 instead of seeing an opaque CORS failure.
		setCORS(w.Header(), origin)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			// Browsers never attach credentials to a preflight, so it
			// cannot carry the token; it only asks permission for the
			// real request, which will.
			h := w.Header()
			h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
			h.Set("Access-Control-Allow-Methods", corsAllowMethods)
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}

	if !g.isPublic(r) {
		if ref, ok := g.checkToken(r); !ok {
			g.refuse(w, r, ref)
			return
		}
	}

	if r.ContentLength > g.maxBody {
		g.refuse(w, r, g.tooLarge())
		return
	}
	if r.Body != nil && r.Body != http.NoBody {
		if r.ContentLength >= 0 {
			// The server already ends the body at Content-Length, so
			// this limit cannot trip; it is kept as a second line.
			r.Body = http.MaxBytesReader(w, r.Body, g.maxBody)
		} else {
			// Unknown length (chunked HTTP/1.1, HTTP/2 without
			// content-length, every gRPC call): the limit trips while
			// the handler reads, so the response has to be intercepted.
			l := newLimiter(g, w, r, origin)
			defer l.finish()
			w = limitedWriter{l}
		}
	}
	next.ServeHTTP(w, r)
}

// hostAllowed reports whether host is one of the allowed Host values. The
// comparison ignores case, as host names do; an empty Host is refused.
func (g *Guard) hostAllowed(host string) bool {
	if host == "" {
		return false
	}
	for _, h := range g.hosts {
		if strings.EqualFold(h, host) {
			return true
		}
	}
	return false
}

// checkOrigin returns the request's Origin when it is allowed, "" when the
// request has none, and ok=false when it has one (or several) that is not
// allowed. "null" (sandboxed frames, file: pages) is never allowed.
func (g *Guard) checkOrigin(r *http.Request) (origin string, ok bool) {
	vals := r.Header.Values("Origin")
	switch len(vals) {
	case 0:
		return "", true
	case 1:
	default:
		return "", false
	}
	for _, o := range g.origins {
		// Browsers serialize origins in lower case; compare without case
		// anyway, and echo the request's own spelling as CORS requires.
		if strings.EqualFold(o, vals[0]) {
			return vals[0], true
		}
	}
	return "", false
}

// isPublic reports whether r reads a public path.
func (g *Guard) isPublic(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	for _, p := range g.public {
		if r.URL.Path == p {
			return true
		}
	}
	return false
}

// Token refusals. They say what was wrong without echoing what was sent: a
// wrong token may be a near miss of the real one.
const (
	msgMissingToken   = `missing bearer token: send the server's token in an "Authorization: Bearer <token>" header (tokens in the URL are not accepted)`
	msgNotBearer      = `the Authorization header does not use the Bearer scheme: send "Authorization: Bearer <token>"`
	msgManyAuth       = "more than one Authorization header"
	msgWrongToken     = "invalid bearer token"
	msgTokenInURL     = "a token in the URL is not accepted (URLs end up in logs and browser history): send it in an \"Authorization: Bearer <token>\" header, or, from a browser's WebSocket, as the subprotocol " + BearerSubprotocolPrefix + "<base64url token>"
	msgMissingWSToken = `missing bearer token: send the server's token in an "Authorization: Bearer <token>" header, or, from a browser's WebSocket, offer the subprotocol ` + BearerSubprotocolPrefix + "<token base64url-encoded without padding> beside a2a.v1"
)

// BearerSubprotocolPrefix starts the WebSocket subprotocol entry that
// carries the bearer token for clients that cannot set headers on a
// WebSocket handshake (browsers): the prefix, then the token
// base64url-encoded without padding, as Kubernetes carries its bearer
// tokens. The server never selects the entry, so it is not echoed.
const BearerSubprotocolPrefix = "a2a.bearer."

// SubprotocolToken returns the token a WebSocket handshake carries in a
// Sec-WebSocket-Protocol entry (BearerSubprotocolPrefix); ok is false when
// there is none or it does not decode.
func SubprotocolToken(h http.Header) (token string, ok bool) {
	for _, v := range h.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(v, ",") {
			enc, found := strings.CutPrefix(strings.TrimSpace(p), BearerSubprotocolPrefix)
			if !found {
				continue
			}
			b, err := base64.RawURLEncoding.DecodeString(enc)
			if err != nil || len(b) == 0 {
				return "", false
			}
			return string(b), true
		}
	}
	return "", false
}

// isWebSocket reports whether r asks to upgrade to a WebSocket.
func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// urlToken reports whether the request's query names a credential: it is
// refused rather than ignored, so that whoever put it there learns to stop.
func urlToken(r *http.Request) bool {
	if r.URL == nil || r.URL.RawQuery == "" {
		return false
	}
	for k := range r.URL.Query() {
		switch strings.ToLower(k) {
		case "token", "access_token", "bearer", "authorization", "auth", "apikey", "api_key", "key":
			return true
		}
	}
	return false
}

// checkToken accepts only "Authorization: Bearer <token>" (scheme in any
// case). Query parameters and cookies are ignored on purpose: URLs end up
// in logs and histories, and cookies are sent by browsers on their own.
func (g *Guard) checkToken(r *http.Request) (refusal, bool) {
	unauth := func(msg, challenge string) (refusal, bool) {
		return refusal{
			status:    http.StatusUnauthorized,
			grpcCode:  grpcUnauthenticated,
			msg:       msg,
			challenge: challenge,
		}, false
	}
	if urlToken(r) {
		return unauth(msgTokenInURL, bearerChallenge+`, error="invalid_request"`)
	}
	vals := r.Header.Values("Authorization")
	if len(vals) == 0 && isWebSocket(r) {
		if cred, ok := SubprotocolToken(r.Header); ok {
			vals = []string{"Bearer " + cred}
		}
	}
	switch len(vals) {
	case 0:
		if isWebSocket(r) {
			return unauth(msgMissingWSToken, bearerChallenge)
		}
		return unauth(msgMissingToken, bearerChallenge)
	case 1:
	default:
		return unauth(msgManyAuth, bearerChallenge+`, error="invalid_request"`)
	}
	scheme, cred, _ := strings.Cut(strings.TrimSpace(vals[0]), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return unauth(msgNotBearer, bearerChallenge)
	}
	cred = strings.TrimSpace(cred)
	if cred == "" {
		return unauth(msgMissingToken, bearerChallenge)
	}
	// Hashing first makes both sides the same length, so neither the
	// comparison time nor an early length check reveals the token length.
	sum := sha256.Sum256([]byte(cred))
	if subtle.ConstantTimeCompare(sum[:], g.tokenSum[:]) != 1 {
		return unauth(msgWrongToken, bearerChallenge+`, error="invalid_token"`)
	}
	return refusal{}, true
}

func (g *Guard) tooLarge() refusal {
	return refusal{
		status:   http.StatusRequestEntityTooLarge,
		grpcCode: grpcResourceExhausted,
		msg:      fmt.Sprintf("request body too large: the limit is %d bytes", g.maxBody),
	}
}

// refuse logs the refusal and writes it, gRPC-shaped for gRPC requests.
func (g *Guard) refuse(w http.ResponseWriter, r *http.Request, ref refusal) {
	// The path only: a query string may hold a token pasted by mistake.
	g.log.LogAttrs(r.Context(), slog.LevelWarn, "guard: request refused",
		slog.String("remote_addr", r.RemoteAddr),
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", ref.status),
		slog.String("reason", ref.msg))

	h := w.Header()
	if ref.status == http.StatusUnauthorized || ref.status == http.StatusForbidden {
		// A client without the token or from the wrong Host or Origin
		// does not keep its connection: HTTP/1.1 closes it after the
		// response, HTTP/2 sends GOAWAY and closes it once idle.
		h.Set("Connection", "close")
		if r.Body != nil && r.Body != http.NoBody {
			// Nor does it get to trickle the body it announced: what
			// the server would read of it after the response fails at
			// once.
			_ = http.NewResponseController(w).SetReadDeadline(time.Now())
		}
	}
	if isGRPC(r) {
		// A trailers-only response, as grpc-go servers send for an
		// immediate error: status 200 and the gRPC status in the one
		// header block, no body. net/http sends that as a single HEADERS
		// frame with END_STREAM.
		h.Set("Content-Type", "application/grpc")
		h.Set("Grpc-Status", strconv.Itoa(ref.grpcCode))
		h.Set("Grpc-Message", encodeGRPCMessage(ref.msg))
		w.WriteHeader(http.StatusOK)
		return
	}
	if ref.challenge != "" {
		h.Set("WWW-Authenticate", ref.challenge)
	}
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	body, err := json.Marshal(struct {
		Error string `json:"error"`
	}{ref.msg})
	if err != nil { // a struct of one string always marshals
		body = []byte(`{"error":"request refused"}`)
	}
	w.WriteHeader(ref.status)
	_, _ = w.Write(append(body, '\n'))
}

// setCORS adds the headers every response to an allowed origin carries.
func setCORS(h http.Header, origin string) {
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
	h.Add("Vary", "Origin")
}

// isGRPC reports whether r is a gRPC call (application/grpc,
// application/grpc+proto, ...), whose client only understands gRPC status.
func isGRPC(r *http.Request) bool {
	const prefix = "application/grpc"
	ct := r.Header.Get("Content-Type")
	return len(ct) >= len(prefix) && strings.EqualFold(ct[:len(prefix)], prefix)
}

// encodeGRPCMessage percent-encodes a grpc-message value as the gRPC HTTP/2
// protocol requires: bytes outside printable ASCII, and '%' itself. The
// message can quote a Host or Origin sent by the client.
func encodeGRPCMessage(msg string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c >= ' ' && c <= '~' && c != '%' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xf])
	}
	return b.String()
}

// quote quotes a client-supplied value for a message, cut short so that a
// huge header does not make a huge response or log record.
func quote(s string) string {
	const max = 200
	if len(s) > max {
		return strconv.Quote(s[:max]) + "..."
	}
	return strconv.Quote(s)
}

// validToken reports whether t can be sent as a bearer token: visible ASCII
// only, since anything else is trimmed or mangled on the way.
func validToken(t string) bool {
	for i := 0; i < len(t); i++ {
		if t[i] <= ' ' || t[i] > '~' {
			return false
		}
	}
	return true
}

// validateHost checks an AllowedHosts entry: a host name or IP, with an
// optional port; IPv6 literals in brackets.
func validateHost(h string) error {
	if h == "" {
		return errors.New("empty")
	}
	if strings.ContainsAny(h, "/ \t@") {
		return errors.New("want host or host:port, without scheme or path")
	}
	host := h
	if strings.Contains(h, ":") && !strings.HasSuffix(h, "]") { // has a port
		hp, port, err := net.SplitHostPort(h)
		if err != nil {
			return fmt.Errorf("want host or host:port: %w", err)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			return fmt.Errorf("bad port %q", port)
		}
		host = hp
		if strings.Contains(hp, ":") {
			host = "[" + hp + "]" // SplitHostPort drops the brackets
		}
	}
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") || net.ParseIP(host[1:len(host)-1]) == nil {
			return errors.New("bad IPv6 literal")
		}
		return nil
	}
	if host == "" || strings.ContainsAny(host, "[]:") {
		return errors.New("want host or host:port (IPv6 literals in brackets)")
	}
	return nil
}

// normalizeOrigin checks an AllowedOrigins entry and returns it as browsers
// serialize origins: scheme://host[:port], lower case, no trailing slash.
func normalizeOrigin(o string) (string, error) {
	if strings.EqualFold(o, "null") {
		return "", errors.New(`"null" is the origin of sandboxed and file: pages and cannot be allowed`)
	}
	u, err := url.Parse(o)
	if err != nil {
		return "", fmt.Errorf("want scheme://host[:port]: %w", err)
	}
	if u.Scheme == "" || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") ||
		u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", errors.New("want scheme://host[:port], without path, query or user")
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}
