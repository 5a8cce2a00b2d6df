// Package mcptools connects to the MCP servers named in settings and offers
// their tools as agentry tools. It follows gemini-cli's mcp-client.ts and
// mcp-tool.ts: a server is started over stdio (command) or reached over
// streamable HTTP (httpUrl, or url with type "http") or HTTP+SSE (url with
// type "sse"; a url without a type tries streamable HTTP, then SSE), its
// tools are listed and filtered by includeTools/excludeTools, and each
// call runs with the server's timeout, forwarding progress notifications
// as live output. The servers' resources are offered through
// list_mcp_resources and read_mcp_resource, as gemini-cli's resource tools.
//
// A server that announces a changed list (notifications/tools/list_changed)
// is listed again, and the Manager's tools (a runtime.ToolSource) change
// with it. With a cache directory, each server's lists are cached after a
// successful listing; a later Manager declares a cached server's tools
// without starting it, and starts it on its first call (a lazy server).
//
// A server that fails while connecting or listing does not stop the others;
// a server that dies during a call is marked dead and restarted on the next
// call. Stdio servers run in their own process group, which Close kills so
// that no server (or child of one) outlives the Manager.
package mcptools

import (
	"errors"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/agentry-dev/agentry/config"
)

// DefaultTimeout is the per-call timeout when a server sets none: gemini-cli's
// MCP_DEFAULT_TIMEOUT_MSEC.
const DefaultTimeout = 10 * time.Minute

// ServerConfig is one entry of the settings' mcpServers map: the
// settings' own type, so that what config loads and validates is what
// the manager runs.
type ServerConfig = config.MCPServerSettings

// timeout returns the per-call timeout.
func timeout(c ServerConfig) time.Duration {
	if c.Timeout <= 0 {
		return DefaultTimeout
	}
	return time.Duration(c.Timeout) * time.Millisecond
}

// minSetupTimeout is the least time connecting to a server and listing its
// tools may take, whatever the per-call timeout: gemini-cli applies the call
// timeout to both, but a timeout chosen for quick calls would make a server
// started through npx or uvx fail to start at all.
const minSetupTimeout = 30 * time.Second

// setupTimeout bounds connecting and listing tools.
func setupTimeout(c ServerConfig) time.Duration {
	return max(timeout(c), minSetupTimeout)
}

// endpoint returns the HTTP endpoint, or "" for a stdio server.
func endpoint(c ServerConfig) string {
	if c.HTTPURL != "" {
		return c.HTTPURL
	}
	return c.URL
}

// enabled reports whether the tool named name passes the include and
// exclude lists (gemini-cli's isEnabled).
func enabled(c ServerConfig, name string) bool {
	for _, x := range c.ExcludeTools {
		if x == name {
			return false
		}
	}
	if len(c.IncludeTools) == 0 {
		return true
	}
	for _, in := range c.IncludeTools {
		if in == name || len(in) > len(name) && in[:len(name)+1] == name+"(" {
			return true
		}
	}
	return false
}

// Config configures a Manager.
type Config struct {
	// Servers maps a server name to its settings.
	Servers map[string]ServerConfig
	// Env is the base environment of stdio servers, as for exec.Cmd.Env;
	// nil means the current process's environment less what
	// envredact.Default withholds. A server's own configured env is
	// added to it whatever it withholds.
	Env []string
	// EnvFunc, when set and Env is nil, returns the base environment; it
	// is called once, when the first stdio server starts, so that a
	// session whose servers are all lazy and unused does not compute it.
	EnvFunc func() []string
	// ExpandEnv is what $VAR references in a server's env and headers
	// are expanded from; nil means Env when it is set, else the current
	// process's whole environment: a reference is the user's own choice
	// of what to pass.
	ExpandEnv []string
	// OAuth, when set, returns the OAuth handler of an HTTP server
	// (package mcpauth's), asked at each connection; nil, or a nil
	// result, means the server's requests carry no token. See auth.go.
	OAuth OAuthFunc
	// Logger receives connection events and servers' stderr (at debug
	// level); nil means slog.Default().
	Logger *slog.Logger
	// ClientName and ClientVersion identify agentry to servers; empty
	// means "agentry" and "dev".
	ClientName, ClientVersion string
	// CacheDir is where each server's tools, resources and prompts are
	// cached after a successful listing (files 0600, named by a hash of
	// the server's settings); "" caches nothing, so that every server
	// starts with Tools.
	CacheDir string
	// Lazy starts a server with a cache entry on its first use instead of
	// in Tools; a server's own Lazy setting wins.
	Lazy bool
	// Taken are names no MCP tool may have (the built-in tools', and what
	// tools.exclude names): such a tool is left out, with a warning.
	Taken []string
}

// validate checks every server, joining the errors so a user sees them all.
func (c Config) validate() error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(c.Servers)) {
		sc := c.Servers[name]
		if name == "" {
			errs = append(errs, errors.New("mcp server with an empty name"))
			continue
		}
		if err := sc.Validate(name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
