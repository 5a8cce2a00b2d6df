// Package agents reads subagent definitions in gemini-cli's format: a
// Markdown file whose YAML front matter describes the agent and whose body
// is a local agent's system prompt. A local agent runs in the same process
// with a subset of its parent's tools; a remote agent is reached over A2A
// through its agent card. Definitions come from the user's directories and,
// in a trusted workspace only, from the workspace's.
package agents

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"strings"
	"sync"
)

// Kind says where an agent runs.
type Kind string

// The kinds of agent.
const (
	// KindLocal runs in this process, in a child session of the caller.
	KindLocal Kind = "local"
	// KindRemote is reached over A2A.
	KindRemote Kind = "remote"
)

// Scope says where a definition was found.
type Scope string

// The scopes of a definition, in the order they are loaded: a project's
// definition hides a user's of the same name, as in gemini-cli.
const (
	ScopeProject Scope = "project"
	ScopeUser    Scope = "user"
)

// Definition is one agent.
type Definition struct {
	// Name is how the model names the agent: lower-case letters, digits,
	// '-' and '_'.
	Name string
	// Kind is local or remote.
	Kind Kind
	// DisplayName is shown to people; default Name.
	DisplayName string
	// Description tells the parent's model what the agent is for.
	// Required for local agents.
	Description string

	// SystemPrompt is a local agent's system prompt: the file's body.
	SystemPrompt string
	// Tools are the parent's tools a local agent may use: names, glob
	// patterns ("*", "read_*"), "mcp_*" for every MCP tool and
	// "mcp_<server>_*" for one server's. Nil gives it all of them.
	Tools []string
	// Model is a local agent's model; "" or "inherit" is the parent's.
	Model string
	// Temperature is a local agent's sampling temperature, when set.
	Temperature *float64
	// MaxTurns bounds a local agent's model calls; 0 means the default.
	MaxTurns int
	// TimeoutMins bounds a local agent's time; 0 means the default.
	TimeoutMins int

	// AgentCardURL is where a remote agent's card is fetched.
	AgentCardURL string
	// AgentCardJSON is a remote agent's card given inline, in place of
	// AgentCardURL.
	AgentCardJSON string
	// Auth is how a remote agent is called, when it needs credentials.
	Auth *Auth

	// File is the definition's file and Scope where it was found.
	File  string
	Scope Scope
}

// Auth is a remote agent's authentication, gemini-cli's frontmatter auth.
// Secret values may name an environment variable as $NAME or ${NAME}, so
// that the secret itself stays out of the file.
type Auth struct {
	// Type is "apiKey" or "http".
	Type string
	// Key is the API key and Name its header (default X-API-Key).
	Key, Name string
	// Scheme is "Bearer" (with Token) or "Basic" (with Username and
	// Password).
	Scheme, Token, Username, Password string
	// AgentCardRequiresAuth sends the credentials with the card request
	// too.
	AgentCardRequiresAuth bool
}

// Headers returns the request headers that carry the credentials, with
// environment references resolved by lookup (os.LookupEnv when nil).
func (a *Auth) Headers(lookup func(string) (string, bool)) (map[string]string, error) {
	if a == nil {
		return nil, nil
	}
	if lookup == nil {
		lookup = os.LookupEnv
	}
	resolve := func(field, v string) (string, error) {
		name, ok := envRef(v)
		if !ok {
			return v, nil
		}
		val, set := lookup(name)
		if !set || val == "" {
			return "", fmt.Errorf("auth.%s: environment variable %s is not set", field, name)
		}
		return val, nil
	}
	switch a.Type {
	case "apiKey":
		key, err := resolve("key", a.Key)
		if err != nil {
			return nil, err
		}
		return map[string]string{or(a.Name, "X-API-Key"): key}, nil
	case "http":
		if a.Scheme == "Bearer" {
			tok, err := resolve("token", a.Token)
			if err != nil {
				return nil, err
			}
			return map[string]string{"Authorization": "Bearer " + tok}, nil
		}
		user, err := resolve("username", a.Username)
		if err != nil {
			return nil, err
		}
		pass, err := resolve("password", a.Password)
		if err != nil {
			return nil, err
		}
		return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))}, nil
	}
	return nil, fmt.Errorf("auth.type: unknown type %q", a.Type)
}

// envRefPattern is compiled on first use: only remote agents with
// credentials have values to look at.
var envRefPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$`)
})

// envRef returns the variable a value names as $NAME or ${NAME}.
func envRef(v string) (string, bool) {
	m := envRefPattern().FindStringSubmatch(v)
	if m == nil {
		return "", false
	}
	return m[1] + m[2], true
}

// Label is the name people see.
func (d Definition) Label() string { return or(d.DisplayName, d.Name) }

// AllowsTool reports whether a local agent may use the parent's tool
// name. Agent tools are never handed down; the runtime leaves them out.
func (d Definition) AllowsTool(name string) bool {
	if d.Tools == nil {
		return true
	}
	for _, p := range d.Tools {
		if strings.HasPrefix(p, "mcp_") {
			continue // only MCP tools match these; see AllowsMCPTool
		}
		if p == name {
			return true
		}
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// AllowsMCPTool reports whether a local agent may use the parent's tool
// name, which is tool of MCP server server.
func (d Definition) AllowsMCPTool(server, tool, name string) bool {
	if d.Tools == nil || d.AllowsTool(name) {
		return true
	}
	for _, p := range d.Tools {
		switch {
		case p == "mcp_*":
			return true
		case p == "mcp_"+server+"_*", p == "mcp_"+server+"_"+tool:
			return true
		}
	}
	return false
}

// LoadError is a definition file that did not load.
type LoadError struct {
	// File is the file's path and Line the line of the problem (0 when
	// the file as a whole is at fault).
	File string
	Line int
	// Field is the front matter field at fault, "" for the file.
	Field string
	// Msg says what is wrong and how to put it right.
	Msg string
}

func (e *LoadError) Error() string {
	where := e.File
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Field != "" {
		return fmt.Sprintf("agent definition %s: %s: %s", where, e.Field, e.Msg)
	}
	return fmt.Sprintf("agent definition %s: %s", where, e.Msg)
}

// ErrUntrusted reports definitions left unread because the workspace is
// not trusted: a cloned repository must not bring agents of its own.
var ErrUntrusted = errors.New("workspace not trusted")

// ErrDuplicate reports a definition hidden by an earlier one of the same
// name.
var ErrDuplicate = errors.New("duplicate agent name")

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
