package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentry-dev/agentry/compose"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/mcpauth"
	"github.com/agentry-dev/agentry/runtime"
)

// mcpProbeTimeout bounds `mcp list`'s request asking an HTTP server
// whether it wants a token.
const mcpProbeTimeout = 5 * time.Second

// mcpListing is one server in `mcp list --json`.
type mcpListing struct {
	Name      string          `json:"name"`
	Transport string          `json:"transport"`
	URL       string          `json:"url,omitempty"`
	Command   string          `json:"command,omitempty"`
	NeedsAuth string          `json:"needsAuth"` // yes, no, unknown
	Why       string          `json:"why,omitempty"`
	Token     *mcpauth.Status `json:"token,omitempty"` // nil for stdio servers
	Error     string          `json:"error,omitempty"`
}

// newMCPCommand is `agentry mcp list` and `agentry mcp auth NAME`.
func newMCPCommand(io stdio, exit *int) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "List the configured MCP servers and authorize the ones that need OAuth",
	}
	var workspace string
	var trust bool
	load := func() (*config.Settings, bool) {
		s, err := config.Load(config.LoadOptions{Workspace: workspace, TrustWorkspace: trust})
		if err != nil {
			writeErrorLine(io.err, err)
			*exit, _ = exitFor(err)
			return nil, false
		}
		return s, true
	}
	var asJSON, noProbe bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the MCP servers of the settings, whether they need OAuth and their stored tokens",
		Long: `List the MCP servers of the settings (mcpServers; a workspace's own only
when it is trusted): the transport, the URL or command, whether the server
needs OAuth (configured with "oauth", or an HTTP server answering 401 with
a Bearer challenge to a request without a token; --no-probe skips that
request) and the state of its stored token in ~/.agentry/mcp-oauth: none,
valid until a time, expired (refreshable), expired, or invalid.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			s, ok := load()
			if !ok {
				return nil
			}
			out := mcpList(c.Context(), s, !noProbe, time.Now())
			if asJSON {
				enc := json.NewEncoder(io.out)
				enc.SetEscapeHTML(false)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"servers": out})
			}
			if len(out) == 0 {
				fmt.Fprintf(io.out, "No MCP servers configured (mcpServers in %s).\n", s.UserSettingsPath())
				return nil
			}
			tw := tabwriter.NewWriter(io.out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tTRANSPORT\tTARGET\tOAUTH\tTOKEN")
			for _, l := range out {
				target := l.URL
				if l.Command != "" {
					target = l.Command
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", l.Name, l.Transport, target, l.NeedsAuth, tokenText(l.Token))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, l := range out {
				if l.Error != "" {
					fmt.Fprintf(io.err, "[WARNING] %s\n", l.Error)
				}
			}
			return nil
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print the servers as one JSON object")
	list.Flags().BoolVar(&noProbe, "no-probe", false, "do not ask HTTP servers whether they need a token")

	var logout bool
	authCmd := &cobra.Command{
		Use:   "auth NAME",
		Short: "Authorize agentry with an MCP server that needs OAuth, and store the token",
		Long: `Walk an MCP server's OAuth authorization now: agentry discovers the
authorization server from the server's 401 (or uses the server's "oauth"
settings), registers itself where the authorization server offers dynamic
client registration (else uses oauth.clientId), prints the authorization
URL to open in a browser, waits on 127.0.0.1 for the browser to come back
(5 minutes at most), and stores the token in ~/.agentry/mcp-oauth (0600).
Sessions and headless runs then use it, refreshing it before it expires.

--logout deletes the stored token instead (it is not revoked at the
authorization server).`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			s, ok := load()
			if !ok {
				return nil
			}
			*exit = mcpAuth(c.Context(), s, args[0], logout, io)
			return nil
		},
	}
	authCmd.Flags().BoolVar(&logout, "logout", false, "delete the stored token instead")
	for _, c := range []*cobra.Command{list, authCmd} {
		c.Flags().StringVarP(&workspace, "workspace", "w", "", "the workspace directory (default the current directory)")
		c.Flags().BoolVar(&trust, "trust-workspace", false, "trust the workspace: use its own mcpServers too")
		cmd.AddCommand(c)
	}
	return cmd
}

// tokenText is the TOKEN column.
func tokenText(st *mcpauth.Status) string {
	if st == nil {
		return "-"
	}
	switch st.State {
	case mcpauth.StateValid:
		if st.Expires.IsZero() {
			return "valid"
		}
		return "valid until " + st.Expires.UTC().Format(time.RFC3339)
	case mcpauth.StateInvalid:
		return "invalid (" + st.Problem + ")"
	}
	return string(st.State)
}

// mcpList describes every configured server, probing HTTP servers
// concurrently when probe is set.
func mcpList(ctx context.Context, s *config.Settings, probe bool, now time.Time) []mcpListing {
	store := mcpauth.NewStore(s.MCPOAuthDir())
	names := slices.Sorted(maps.Keys(s.MCPServers))
	out := make([]mcpListing, len(names))
	var probes []int // indexes of the servers to ask
	for i, name := range names {
		sc := s.MCPServers[name]
		l := mcpListing{Name: name, Transport: "http", URL: sc.HTTPURL, NeedsAuth: "unknown"}
		if l.URL == "" {
			l.URL = sc.URL
		}
		if err := sc.Validate(name); err != nil {
			l.Error = err.Error()
		}
		if sc.Command != "" {
			l.Transport, l.URL, l.NeedsAuth = "stdio", "", "no"
			l.Command = strings.Join(append([]string{sc.Command}, sc.Args...), " ")
		} else {
			st := store.Status(name, now)
			l.Token = &st
			switch {
			case sc.OAuth != nil || sc.AuthProviderType != "":
				l.NeedsAuth, l.Why = "yes", "oauth is configured"
			case l.Token.State != mcpauth.StateNone:
				l.NeedsAuth, l.Why = "yes", "a token is stored"
			case probe && l.URL != "":
				probes = append(probes, i)
			}
		}
		out[i] = l
	}
	var wg sync.WaitGroup
	for _, i := range probes {
		wg.Go(func() {
			out[i].NeedsAuth, out[i].Why = probeAuth(ctx, out[i].URL, s.MCPServers[out[i].Name].Headers)
		})
	}
	wg.Wait()
	return out
}

// probeAuth sends a ping without a token and reads the answer.
func probeAuth(ctx context.Context, url string, headers map[string]string) (string, string) {
	ctx, cancel := context.WithTimeout(ctx, mcpProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"ping"}`))
	if err != nil {
		return "unknown", err.Error()
	}
	for k, v := range headers {
		req.Header.Set(k, os.ExpandEnv(v))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "unknown", "unreachable: " + err.Error()
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized && strings.Contains(strings.ToLower(resp.Header.Get("WWW-Authenticate")), "bearer") {
		return "yes", "the server answers 401 with a Bearer challenge"
	}
	return "no", fmt.Sprintf("the server answers %d without a token", resp.StatusCode)
}

// mcpAuth is `agentry mcp auth NAME [--logout]`; it returns the exit code.
func mcpAuth(ctx context.Context, s *config.Settings, name string, logout bool, io stdio) int {
	sc, ok := s.MCPServers[name]
	if !ok {
		names := slices.Sorted(maps.Keys(s.MCPServers))
		if len(names) == 0 {
			writeErrorLine(io.err, fmt.Errorf("no MCP server named %q: no MCP servers are configured (add one under mcpServers in settings.json)", name))
			return runtime.ExitInput
		}
		writeErrorLine(io.err, fmt.Errorf("no MCP server named %q in the settings (configured: %s)", name, strings.Join(names, ", ")))
		return runtime.ExitInput
	}
	if err := sc.Validate(name); err != nil {
		writeErrorLine(io.err, err)
		return runtime.ExitConfig
	}
	if sc.Command != "" {
		writeErrorLine(io.err, fmt.Errorf("mcp server %q is a stdio server; OAuth is for url and httpUrl servers", name))
		return runtime.ExitInput
	}
	store := mcpauth.NewStore(s.MCPOAuthDir())
	if logout {
		removed, err := store.Delete(name)
		switch {
		case err != nil:
			writeErrorLine(io.err, err)
			return runtime.ExitStorage
		case removed:
			fmt.Fprintf(io.out, "Removed the stored OAuth token of %s (%s).\n", name, store.Path(name))
		default:
			fmt.Fprintf(io.out, "No OAuth token is stored for %s.\n", name)
		}
		return 0
	}
	prompt := func(_ context.Context, server, authURL string) error {
		_, err := fmt.Fprintf(io.err, "Authorizing agentry with MCP server %q.\nOpen this URL in your browser and sign in:\n\n%s\n\nWaiting for the browser to return (5 minutes at most)...\n", server, authURL)
		return err
	}
	h, err := compose.MCPAuthHandler(s, store, name, prompt, nil)
	if err != nil {
		writeErrorLine(io.err, err)
		return runtime.ExitConfig
	}
	tok, err := h.Login(ctx)
	if err != nil {
		writeErrorLine(io.err, err)
		if errors.Is(err, mcpauth.ErrInsecureStore) {
			return runtime.ExitStorage
		}
		if ctx.Err() != nil {
			return runtime.ExitCancelled
		}
		return runtime.ExitAuth
	}
	until := ""
	if e := tok.Expiry(); !e.IsZero() {
		until = ", valid until " + e.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(io.out, "Authorized %s; token stored in %s%s.\n", name, store.Path(name), until)
	return 0
}

// startupPrompt shows an MCP server's authorization URL on stderr until
// stop, when the terminal UI takes the screen; after that the flow is not
// walked by itself (the server's error names /mcp auth).
type startupPrompt struct {
	w       io.Writer
	stopped atomic.Bool
}

func (p *startupPrompt) stop() { p.stopped.Store(true) }

func (p *startupPrompt) prompt(_ context.Context, server, authURL string) error {
	if p.stopped.Load() {
		return &mcpauth.AuthRequiredError{Server: server}
	}
	_, err := fmt.Fprintf(p.w, "MCP server %q needs authorization.\nOpen this URL in your browser and sign in:\n\n%s\n\nWaiting for the browser to return (5 minutes at most)...\n", server, authURL)
	return err
}

// mcpAuthSlash is the interactive terminal's /mcp auth SERVER.
func mcpAuthSlash(s *config.Settings) func(ctx context.Context, name string, out func(string)) error {
	return func(ctx context.Context, name string, out func(string)) error {
		sc, ok := s.MCPServers[name]
		switch {
		case !ok:
			return fmt.Errorf("no MCP server named %q in the settings", name)
		case sc.Command != "":
			return fmt.Errorf("mcp server %q is a stdio server; OAuth is for url and httpUrl servers", name)
		}
		if err := sc.Validate(name); err != nil {
			return err
		}
		store := mcpauth.NewStore(s.MCPOAuthDir())
		h, err := compose.MCPAuthHandler(s, store, name, func(_ context.Context, server, authURL string) error {
			out(fmt.Sprintf("Open this URL in your browser to authorize agentry with %s (Esc cancels):\n%s", server, authURL))
			return nil
		}, nil)
		if err != nil {
			return err
		}
		if _, err := h.Login(ctx); err != nil {
			return err
		}
		out(fmt.Sprintf("Authorized %s; token stored in %s. New conversations (/clear) and sessions use it.", name, store.Path(name)))
		return nil
	}
}
