// Package mcptools connects to the MCP servers named in settings and offers
// their tools as agentry tools. It follows gemini-cli's mcp-client.ts and
// mcp-tool.ts: a server is started over stdio (command) or reached over
// streamable HTTP (url or httpUrl), its tools are listed and filtered by
// includeTools/excludeTools, and each call runs with the server's timeout,
// forwarding progress notifications as live output.
//
// A server that fails while connecting or listing does not stop the others;
// a server that dies during a call is marked dead and restarted on the next
// call. Stdio servers run in their own process group, which Close kills so
// that no server (or child of one) outlives the Manager.
package mcptools

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"
)

// DefaultTimeout is the per-call timeout when a server sets none: gemini-cli's
// MCP_DEFAULT_TIMEOUT_MSEC.
const DefaultTimeout = 10 * time.Minute

// ServerConfig is one entry of the settings' mcpServers map. The JSON names
// are gemini-cli's, so the same settings file works for both.
type ServerConfig struct {
	// Command starts a stdio server; Args are its arguments.
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Env is added to the base environment of a stdio server. Values may
	// refer to environment variables as $VAR or ${VAR}, as gemini-cli
	// expands them, including ones the base environment withholds.
	Env map[string]string `json:"env,omitempty"`
	// Cwd is a stdio server's working directory (default: the caller's).
	Cwd string `json:"cwd,omitempty"`
	// URL is a streamable HTTP endpoint. gemini-cli also accepts SSE here
	// (with type "sse"); like gemini-cli without a type, agentry speaks
	// streamable HTTP.
	URL string `json:"url,omitempty"`
	// HTTPURL is gemini-cli's older spelling of a streamable HTTP endpoint.
	HTTPURL string `json:"httpUrl,omitempty"`
	// Headers are sent with every HTTP request; values may refer to
	// environment variables like Env's.
	Headers map[string]string `json:"headers,omitempty"`
	// Timeout is the per-call timeout in milliseconds; zero means
	// DefaultTimeout. It also bounds connecting and listing tools, but
	// never to less than 30 seconds.
	Timeout int `json:"timeout,omitempty"`
	// IncludeTools, when non-empty, lists the only tools offered; an entry
	// "name(...)" also matches name, as in gemini-cli.
	IncludeTools []string `json:"includeTools,omitempty"`
	// ExcludeTools lists tools never offered; it wins over IncludeTools.
	ExcludeTools []string `json:"excludeTools,omitempty"`
	// Trust lets this server's tools run without confirmation (the policy
	// layer decides; mcptools only reports it through Tool.MCP).
	Trust bool `json:"trust,omitempty"`
	// Description is a human description of the server.
	Description string `json:"description,omitempty"`
}

// Validate reports whether c names exactly one transport and has sane
// values. name is the server's key in mcpServers; errors mention it and the
// offending field so the user can find the entry.
func (c ServerConfig) Validate(name string) error {
	set := 0
	for _, v := range []string{c.Command, c.URL, c.HTTPURL} {
		if v != "" {
			set++
		}
	}
	switch {
	case set == 0:
		return fmt.Errorf("mcp server %q: one of command, url or httpUrl is required", name)
	case set > 1:
		// gemini-cli silently prefers httpUrl, then url, then command; a
		// config naming two is almost certainly a mistake, so say so.
		return fmt.Errorf("mcp server %q: only one of command, url or httpUrl may be set", name)
	}
	if c.Timeout < 0 {
		return fmt.Errorf("mcp server %q: timeout must not be negative (got %d)", name, c.Timeout)
	}
	if c.Command == "" {
		if len(c.Args) > 0 {
			return fmt.Errorf("mcp server %q: args needs command", name)
		}
		if len(c.Env) > 0 {
			return fmt.Errorf("mcp server %q: env needs command", name)
		}
		if c.Cwd != "" {
			return fmt.Errorf("mcp server %q: cwd needs command", name)
		}
	} else if len(c.Headers) > 0 {
		return fmt.Errorf("mcp server %q: headers needs url or httpUrl", name)
	}
	return nil
}

// timeout returns the per-call timeout.
func (c ServerConfig) timeout() time.Duration {
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
func (c ServerConfig) setupTimeout() time.Duration {
	return max(c.timeout(), minSetupTimeout)
}

// endpoint returns the HTTP endpoint, or "" for a stdio server.
func (c ServerConfig) endpoint() string {
	if c.HTTPURL != "" {
		return c.HTTPURL
	}
	return c.URL
}

// enabled reports whether the tool named name passes the include and
// exclude lists (gemini-cli's isEnabled).
func (c ServerConfig) enabled(name string) bool {
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
	// ExpandEnv is what $VAR references in a server's env and headers
	// are expanded from; nil means Env when it is set, else the current
	// process's whole environment: a reference is the user's own choice
	// of what to pass.
	ExpandEnv []string
	// Logger receives connection events and servers' stderr (at debug
	// level); nil means slog.Default().
	Logger *slog.Logger
	// ClientName and ClientVersion identify agentry to servers; empty
	// means "agentry" and "dev".
	ClientName, ClientVersion string
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
