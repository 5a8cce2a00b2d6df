package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
)

// ErrRefusedAddress is the error of a delivery whose connection would
// reach an address webhooks may not.
var ErrRefusedAddress = errors.New("webhook: refused address")

// DefaultTimeout bounds one delivery when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// maxRedirects bounds the redirects one delivery follows.
const maxRedirects = 10

// tokenHeader carries a push config's token (A2A).
const tokenHeader = "A2A-Notification-Token"

// Config configures a Sender.
type Config struct {
	// Timeout bounds one delivery, redirects included; zero is
	// DefaultTimeout.
	Timeout time.Duration
	// AllowPrivate lets deliveries reach the addresses Special names (an
	// IDE's webhook on this machine). Without it every connection is
	// checked, and no proxy is used: a proxy would connect to the webhook
	// on the sender's behalf, past the check.
	AllowPrivate bool
	// Logger receives a Warn record for each failed delivery; nil is
	// slog.Default().
	Logger *slog.Logger
}

// Sender delivers push notifications over HTTP: each event is POSTed as
// an A2A StreamResponse to the config's URL. It is safe for concurrent
// use.
type Sender struct {
	client *http.Client
	log    *slog.Logger
}

var _ push.Sender = (*Sender)(nil)

// NewSender returns a Sender.
func NewSender(cfg Config) *Sender {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	dialer := &net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}
	proxy := http.ProxyFromEnvironment
	if !cfg.AllowPrivate {
		dialer.Control = refuseSpecial
		proxy = nil
	}
	// A transport of its own: DialContext is the one way out, for http
	// and https alike, so every connection passes the Control check.
	tr := &http.Transport{
		Proxy:                 proxy,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &Sender{
		client: &http.Client{Transport: tr, Timeout: cfg.Timeout, CheckRedirect: checkRedirect},
		log:    cfg.Logger,
	}
}

// refuseSpecial is the dialer's Control hook: it runs for the address
// actually connected to, after name resolution, so neither a host name
// nor a redirect nor a DNS answer that changed since the config was
// registered gets past it.
func refuseSpecial(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q is not host:port", ErrRefusedAddress, address)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("%w: %q is not an IP address", ErrRefusedAddress, host)
	}
	if rg, bad := Special(ip); bad {
		return fmt.Errorf("%w: %s is %s; start the server with --allow-private-push to send webhooks there", ErrRefusedAddress, ip, rg.Name)
	}
	return nil
}

// checkRedirect bounds redirects and drops the notification token when a
// redirect leaves the host: Go drops Authorization itself, not custom
// headers.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("webhook: stopped after %d redirects", maxRedirects)
	}
	if req.URL.Host != via[len(via)-1].URL.Host {
		req.Header.Del(tokenHeader)
	}
	return nil
}

// SendPush implements push.Sender. A failed delivery is logged, not
// returned: a webhook that is down must not fail the task.
func (s *Sender) SendPush(ctx context.Context, cfg *a2a.PushConfig, event a2a.Event) error {
	if err := s.send(ctx, cfg, event); err != nil {
		s.log.WarnContext(ctx, "webhook: push notification not delivered", "err", err)
	}
	return nil
}

// Send delivers one event and returns what went wrong.
func (s *Sender) Send(ctx context.Context, cfg *a2a.PushConfig, event a2a.Event) error {
	return s.send(ctx, cfg, event)
}

func (s *Sender) send(ctx context.Context, cfg *a2a.PushConfig, event a2a.Event) error {
	body, err := json.Marshal(a2a.StreamResponse{Event: event})
	if err != nil {
		return fmt.Errorf("webhook: encode the event: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if cfg.Token != "" {
		req.Header.Set(tokenHeader, cfg.Token)
	}
	if cfg.Auth != nil && cfg.Auth.Credentials != "" {
		switch strings.ToLower(cfg.Auth.Scheme) {
		case "bearer":
			req.Header.Set("Authorization", "Bearer "+cfg.Auth.Credentials)
		case "basic":
			req.Header.Set("Authorization", "Basic "+cfg.Auth.Credentials)
		}
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return fmt.Errorf("webhook: %s answered %s", req.URL.Redacted(), resp.Status)
	}
	return nil
}
