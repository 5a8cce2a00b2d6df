package agents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// The patterns are compiled on first use: most runs find no definition
// to parse.
var (
	// namePattern is gemini-cli's agent name slug.
	namePattern = lazyRegexp(`^[a-z0-9-_]+$`)
	// yamlLine is the position at the start of a YAML parser's message.
	yamlLine = lazyRegexp(`^line (\d+): `)
	// toolPattern is a tool name or glob pattern.
	toolPattern = lazyRegexp(`^[A-Za-z0-9_.*?-]+$`)
)

// lazyRegexp returns a function that compiles expr on its first call and
// returns the same *regexp.Regexp on every call.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// The front matter fields of each kind, as gemini-cli's strict schemas
// list them (in the order error messages name them).
var (
	localFields  = []string{"kind", "name", "description", "display_name", "tools", "model", "temperature", "max_turns", "timeout_mins"}
	remoteFields = []string{"kind", "name", "description", "display_name", "agent_card_url", "agent_card_json", "auth"}
	// unsupported are gemini-cli fields agentry reads but cannot honour:
	// a definition that relies on them would run without what it expects.
	unsupported = map[string]string{
		"mcp_servers": "not supported: configure the server under mcpServers in settings and list its tools (mcp_<server>_*) in tools",
		"policy":      "not supported: the agent's calls follow the session's approval mode and tools.allowed",
	}
)

// Parse reads the definitions of one file: one local or remote agent, or,
// when the front matter is a YAML list, several remote ones. file names
// the file in errors.
func Parse(file string, data []byte) ([]Definition, error) {
	front, body, line, err := splitFrontMatter(data)
	if err != nil {
		return nil, &LoadError{File: file, Msg: err.Error()}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(front, &doc); err != nil {
		// The parser counts lines from the front matter's first; the
		// user counts them from the file's.
		msg, at := strings.TrimPrefix(err.Error(), "yaml: "), 0
		if m := yamlLine().FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			at, msg = n+line-1, msg[len(m[0]):]
		}
		return nil, &LoadError{File: file, Line: at, Msg: "the front matter is not valid YAML: " + msg}
	}
	p := &parser{file: file, offset: line}
	if len(doc.Content) == 0 {
		return nil, &LoadError{File: file, Msg: "the front matter is empty: it needs at least name and description"}
	}
	root := doc.Content[0]
	switch root.Kind {
	case yaml.SequenceNode:
		// gemini-cli: a list is many remote agents, and only remote ones.
		var out []Definition
		for i, item := range root.Content {
			d, err := p.definition(item, fmt.Sprintf("[%d].", i), KindRemote, "")
			if err != nil {
				return nil, err
			}
			out = append(out, d)
		}
		if len(out) == 0 {
			return nil, &LoadError{File: file, Msg: "the front matter is an empty list"}
		}
		return out, nil
	case yaml.MappingNode:
		d, err := p.definition(root, "", "", strings.TrimSpace(string(body)))
		if err != nil {
			return nil, err
		}
		return []Definition{d}, nil
	}
	return nil, p.errorf(root, "", "the front matter must be a mapping of fields (name: …, description: …)")
}

// splitFrontMatter separates the YAML between the leading "---" lines from
// the body, and returns the file line the YAML starts on.
func splitFrontMatter(data []byte) (front, body []byte, line int, err error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	const missing = `missing YAML front matter: the file must start with a "---" line, the fields, and another "---" line (---\nname: my-agent\ndescription: …\n---)`
	rest, ok := bytes.CutPrefix(data, []byte("---\n"))
	if !ok {
		return nil, nil, 0, fmt.Errorf("%s", missing)
	}
	if bytes.HasPrefix(rest, []byte("---\n")) || bytes.Equal(rest, []byte("---")) {
		return nil, nil, 0, fmt.Errorf("the front matter is empty: it needs at least name and description")
	}
	end := bytes.Index(rest, []byte("\n---\n"))
	switch {
	case end >= 0:
		return rest[:end], rest[end+5:], 2, nil
	case bytes.HasSuffix(rest, []byte("\n---")):
		return rest[:len(rest)-4], nil, 2, nil
	}
	return nil, nil, 0, fmt.Errorf("the front matter is not closed: add a \"---\" line after the fields")
}

type parser struct {
	file   string
	offset int // the file line of the YAML's first line
}

func (p *parser) errorf(n *yaml.Node, field, format string, args ...any) error {
	line := 0
	if n != nil && n.Line > 0 {
		line = n.Line + p.offset - 1
	}
	return &LoadError{File: p.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// definition reads one agent's mapping. want forces a kind (list items are
// remote); prefix names list items in errors.
func (p *parser) definition(m *yaml.Node, prefix string, want Kind, body string) (Definition, error) {
	if m.Kind != yaml.MappingNode {
		return Definition{}, p.errorf(m, strings.TrimSuffix(prefix, "."), "must be a mapping of fields")
	}
	fields := map[string]*yaml.Node{}
	keys := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if _, dup := fields[k.Value]; dup {
			return Definition{}, p.errorf(k, prefix+k.Value, "given twice")
		}
		fields[k.Value], keys[k.Value] = v, k
	}
	d := Definition{Kind: want, File: p.file}
	if kn, ok := fields["kind"]; ok {
		k, err := p.str(kn, prefix+"kind")
		if err != nil {
			return d, err
		}
		switch Kind(k) {
		case KindLocal, KindRemote:
		default:
			return d, p.errorf(kn, prefix+"kind", "must be local or remote, not %q", k)
		}
		if want != "" && Kind(k) != want {
			return d, p.errorf(kn, prefix+"kind", "a list of agents may hold only remote agents")
		}
		d.Kind = Kind(k)
	}
	if d.Kind == "" {
		d.Kind = KindLocal
		if fields["agent_card_url"] != nil || fields["agent_card_json"] != nil {
			d.Kind = KindRemote
		}
	}
	allowed := localFields
	if d.Kind == KindRemote {
		allowed = remoteFields
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range fields {
			if !yield(k) {
				return
			}
		}
	}) {
		if why, ok := unsupported[k]; ok {
			return d, p.errorf(keys[k], prefix+k, "%s", why)
		}
		if !slices.Contains(allowed, k) {
			return d, p.errorf(keys[k], prefix+k, "unknown field for a %s agent (the fields are %s)", d.Kind, strings.Join(allowed, ", "))
		}
	}

	var err error
	nameNode := fields["name"]
	if nameNode == nil {
		return d, p.errorf(m, prefix+"name", "missing: every agent needs a name (lower-case letters, digits, - and _)")
	}
	if d.Name, err = p.str(nameNode, prefix+"name"); err != nil {
		return d, err
	}
	if !namePattern().MatchString(d.Name) {
		return d, p.errorf(nameNode, prefix+"name", "%q is not a valid name: use lower-case letters, digits, - and _", d.Name)
	}
	if n := fields["display_name"]; n != nil {
		if d.DisplayName, err = p.str(n, prefix+"display_name"); err != nil {
			return d, err
		}
	}
	if n := fields["description"]; n != nil {
		if d.Description, err = p.str(n, prefix+"description"); err != nil {
			return d, err
		}
	}
	if d.Kind == KindRemote {
		return p.remote(d, fields, prefix, m)
	}
	if strings.TrimSpace(d.Description) == "" {
		return d, p.errorf(or2(fields["description"], m), prefix+"description", "missing or empty: the parent's model chooses agents by their description")
	}
	d.SystemPrompt = body
	if n := fields["tools"]; n != nil {
		if n.Kind != yaml.SequenceNode {
			return d, p.errorf(n, prefix+"tools", "must be a list of tool names, e.g. [read_file, glob]")
		}
		d.Tools = []string{}
		for i, item := range n.Content {
			t, err := p.str(item, fmt.Sprintf("%stools[%d]", prefix, i))
			if err != nil {
				return d, err
			}
			if _, badPattern := path.Match(t, ""); !toolPattern().MatchString(t) || badPattern != nil {
				return d, p.errorf(item, fmt.Sprintf("%stools[%d]", prefix, i), "%q is not a tool name or pattern", t)
			}
			d.Tools = append(d.Tools, t)
		}
	}
	if n := fields["model"]; n != nil {
		if d.Model, err = p.str(n, prefix+"model"); err != nil {
			return d, err
		}
	}
	if n := fields["temperature"]; n != nil {
		t, err := strconv.ParseFloat(n.Value, 64)
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!float" && n.Tag != "!!int") || err != nil || t < 0 || t > 2 {
			return d, p.errorf(n, prefix+"temperature", "must be a number from 0 to 2, not %q", n.Value)
		}
		d.Temperature = &t
	}
	if d.MaxTurns, err = p.positive(fields["max_turns"], prefix+"max_turns"); err != nil {
		return d, err
	}
	if d.TimeoutMins, err = p.positive(fields["timeout_mins"], prefix+"timeout_mins"); err != nil {
		return d, err
	}
	return d, nil
}

func (p *parser) remote(d Definition, fields map[string]*yaml.Node, prefix string, m *yaml.Node) (Definition, error) {
	urlNode, jsonNode := fields["agent_card_url"], fields["agent_card_json"]
	switch {
	case urlNode != nil && jsonNode != nil:
		return d, p.errorf(jsonNode, prefix+"agent_card_json", "give agent_card_url or agent_card_json, not both")
	case urlNode == nil && jsonNode == nil:
		return d, p.errorf(m, prefix+"agent_card_url", "missing: a remote agent needs agent_card_url (or agent_card_json)")
	case urlNode != nil:
		u, err := p.str(urlNode, prefix+"agent_card_url")
		if err != nil {
			return d, err
		}
		pu, perr := url.Parse(u)
		if perr != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return d, p.errorf(urlNode, prefix+"agent_card_url", "%q is not an http(s) URL", u)
		}
		d.AgentCardURL = u
	default:
		var raw any
		if err := jsonNode.Decode(&raw); err != nil {
			return d, p.errorf(jsonNode, prefix+"agent_card_json", "%v", err)
		}
		if s, ok := raw.(string); ok {
			var card map[string]any
			if err := json.Unmarshal([]byte(s), &card); err != nil || card == nil {
				return d, p.errorf(jsonNode, prefix+"agent_card_json", "must be an agent card as a JSON object")
			}
			d.AgentCardJSON = s
		} else if obj, ok := raw.(map[string]any); ok {
			b, err := json.Marshal(obj)
			if err != nil {
				return d, p.errorf(jsonNode, prefix+"agent_card_json", "%v", err)
			}
			d.AgentCardJSON = string(b)
		} else {
			return d, p.errorf(jsonNode, prefix+"agent_card_json", "must be an agent card: a JSON object, or a mapping")
		}
	}
	if n := fields["auth"]; n != nil {
		a, err := p.auth(n, prefix+"auth")
		if err != nil {
			return d, err
		}
		d.Auth = a
	}
	return d, nil
}

func (p *parser) auth(n *yaml.Node, field string) (*Auth, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errorf(n, field, "must be a mapping: type apiKey (key, name) or type http (scheme Bearer with token, or Basic with username and password)")
	}
	vals := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		vals[n.Content[i].Value] = n.Content[i+1]
	}
	a := &Auth{}
	get := func(k string, required bool) (string, error) {
		v := vals[k]
		if v == nil {
			if required {
				return "", p.errorf(n, field+"."+k, "missing")
			}
			return "", nil
		}
		s, err := p.str(v, field+"."+k)
		if err == nil && strings.HasPrefix(s, "!") {
			// gemini-cli runs "!command" values; a definition file is no
			// place to run commands from.
			return "", p.errorf(v, field+"."+k, "commands (!…) are not run: put the secret in an environment variable and write $NAME")
		}
		if err == nil && required && s == "" {
			return "", p.errorf(v, field+"."+k, "is empty")
		}
		return s, err
	}
	var err error
	if a.Type, err = get("type", true); err != nil {
		return nil, err
	}
	var known []string
	switch a.Type {
	case "apiKey":
		known = []string{"type", "key", "name", "agent_card_requires_auth"}
		if a.Key, err = get("key", true); err != nil {
			return nil, err
		}
		if a.Name, err = get("name", false); err != nil {
			return nil, err
		}
	case "http":
		known = []string{"type", "scheme", "token", "username", "password", "agent_card_requires_auth"}
		if a.Scheme, err = get("scheme", true); err != nil {
			return nil, err
		}
		switch a.Scheme {
		case "Bearer":
			if a.Token, err = get("token", true); err != nil {
				return nil, err
			}
		case "Basic":
			if a.Username, err = get("username", true); err != nil {
				return nil, err
			}
			if a.Password, err = get("password", true); err != nil {
				return nil, err
			}
		default:
			return nil, p.errorf(vals["scheme"], field+".scheme", "must be Bearer or Basic, not %q", a.Scheme)
		}
	default:
		return nil, p.errorf(vals["type"], field+".type", "must be apiKey or http, not %q", a.Type)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; !slices.Contains(known, k.Value) {
			return nil, p.errorf(k, field+"."+k.Value, "unknown field for %s auth (the fields are %s)", a.Type, strings.Join(known, ", "))
		}
	}
	if v := vals["agent_card_requires_auth"]; v != nil {
		if v.Tag != "!!bool" {
			return nil, p.errorf(v, field+".agent_card_requires_auth", "must be true or false")
		}
		a.AgentCardRequiresAuth = v.Value == "true"
	}
	return a, nil
}

// str reads a scalar string field.
func (p *parser) str(n *yaml.Node, field string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", p.errorf(n, field, "must be a string")
	}
	return n.Value, nil
}

// positive reads an optional positive integer field.
func (p *parser) positive(n *yaml.Node, field string) (int, error) {
	if n == nil {
		return 0, nil
	}
	v, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || err != nil || v <= 0 {
		return 0, p.errorf(n, field, "must be a positive whole number, not %q", n.Value)
	}
	return v, nil
}

func or2(n, def *yaml.Node) *yaml.Node {
	if n != nil {
		return n
	}
	return def
}
