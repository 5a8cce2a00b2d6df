package mcptools

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/tools"
)

// The resource tools' names, gemini-cli's.
const (
	ListResourcesName = "list_mcp_resources"
	ReadResourceName  = "read_mcp_resource"
)

// resource is one resource of one server.
type resource struct {
	srv *server
	r   *mcp.Resource
}

// resources returns every server's resources as last listed or cached,
// servers in name order.
func (m *Manager) resources() []resource {
	var out []resource
	for _, srv := range m.list {
		if l := srv.lists.Load(); l != nil {
			for _, r := range l.Resources {
				out = append(out, resource{srv, r})
			}
		}
	}
	return out
}

// findResource finds a resource the way gemini-cli's findResourceByUri
// does: "server:uri" first, then the first resource whose URI is id.
func (m *Manager) findResource(id string) (resource, bool) {
	all := m.resources()
	if name, uri, ok := strings.Cut(id, ":"); ok && name != "" {
		for _, r := range all {
			if r.srv.name == name && r.r.URI == uri {
				return r, true
			}
		}
	}
	for _, r := range all {
		if r.r.URI == id {
			return r, true
		}
	}
	return resource{}, false
}

// listResources is gemini-cli's list_mcp_resources.
type listResources struct{ m *Manager }

var listResourcesDecl = &genai.FunctionDeclaration{
	Name:        ListResourcesName,
	Description: "Lists all available resources exposed by connected MCP servers.",
	ParametersJsonSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"serverName": map[string]any{
				"description": "Optional filter to list resources from a specific server.",
				"type":        "string",
			},
		},
		"required": []any{},
	},
}

// Name returns list_mcp_resources.
func (*listResources) Name() string { return ListResourcesName }

// DisplayName returns gemini-cli's display name.
func (*listResources) DisplayName() string { return "List MCP Resources" }

// Kind returns tools.KindSearch, gemini-cli's kind for it: read-only.
func (*listResources) Kind() tools.Kind { return tools.KindSearch }

// Declaration returns gemini-cli's declaration.
func (*listResources) Declaration() *genai.FunctionDeclaration { return listResourcesDecl }

// Describe returns gemini-cli's description of a call.
func (*listResources) Describe(map[string]any) string { return "List MCP resources" }

// Execute lists the resources the servers last listed (or cached), one
// line each: "- server:uri | name | description".
func (t *listResources) Execute(_ context.Context, call tools.Call) (tools.Result, error) {
	server, _ := call.Args["serverName"].(string)
	var rs []resource
	for _, r := range t.m.resources() {
		if server == "" || r.srv.name == server {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		msg := "No MCP resources found."
		if server != "" {
			msg = "No resources found for server: " + server
		}
		return tools.Result{LLMContent: msg, Display: msg}, nil
	}
	var b strings.Builder
	b.WriteString("Available MCP Resources:\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "- %s:%s", r.srv.name, r.r.URI)
		if r.r.Name != "" {
			b.WriteString(" | " + r.r.Name)
		}
		if r.r.Description != "" {
			b.WriteString(" | " + r.r.Description)
		}
		b.WriteString("\n")
	}
	return tools.Result{LLMContent: b.String(), Display: fmt.Sprintf("Listed %d resources.", len(rs))}, nil
}

// readResource is gemini-cli's read_mcp_resource.
type readResource struct{ m *Manager }

var readResourceDecl = &genai.FunctionDeclaration{
	Name:        ReadResourceName,
	Description: "Reads the content of a specified Model Context Protocol (MCP) resource.",
	ParametersJsonSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"uri": map[string]any{
				"description": "The URI of the MCP resource to read.",
				"type":        "string",
			},
		},
		"required": []any{"uri"},
	},
}

// Name returns read_mcp_resource.
func (*readResource) Name() string { return ReadResourceName }

// DisplayName returns gemini-cli's display name.
func (*readResource) DisplayName() string { return "Read MCP Resource" }

// Kind returns tools.KindRead: read-only.
func (*readResource) Kind() tools.Kind { return tools.KindRead }

// Declaration returns gemini-cli's declaration.
func (*readResource) Declaration() *genai.FunctionDeclaration { return readResourceDecl }

// Describe returns gemini-cli's description of a call.
func (t *readResource) Describe(args map[string]any) string {
	uri, _ := args["uri"].(string)
	if r, ok := t.m.findResource(uri); ok {
		return fmt.Sprintf("Read MCP resource %q from server %q", r.r.Name, r.srv.name)
	}
	return "Read MCP resource: " + uri
}

// Execute reads the resource from its server (starting a lazy server):
// text contents as they are, each followed by a newline, and binary ones
// as "[Binary Data (mime)]".
func (t *readResource) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	uri, _ := call.Args["uri"].(string)
	if uri == "" {
		return tools.Result{}, &tools.Error{Type: tools.ErrInvalidParams, Msg: "No URI provided."}
	}
	r, ok := t.m.findResource(uri)
	if !ok {
		return tools.Result{}, &tools.Error{Type: tools.ErrMCPResourceNotFound, Msg: "Resource not found for URI: " + uri}
	}
	s := r.srv
	fail := func(err error) (tools.Result, error) {
		return tools.Result{}, &tools.Error{Type: tools.ErrMCPToolError, Msg: "Failed to read resource: " + err.Error(), Err: err}
	}
	sess, _, err := s.session(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, fmt.Errorf("%s: %w", ReadResourceName, context.Cause(ctx))
		}
		return fail(err)
	}
	rctx, cancel := s.scope(ctx, timeout(s.cfg))
	defer cancel()
	res, err := sess.ReadResource(rctx, &mcp.ReadResourceParams{URI: r.r.URI})
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, fmt.Errorf("%s: %w", ReadResourceName, context.Cause(ctx))
		}
		if c := context.Cause(rctx); c != nil {
			err = fmt.Errorf("%w (%w)", err, c)
		} else if !isWireError(err) {
			s.markDead(sess)
		}
		return fail(err)
	}
	var b strings.Builder
	var parts []map[string]any
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		switch {
		case c.Text != "":
			b.WriteString(c.Text + "\n")
		case len(c.Blob) > 0:
			fmt.Fprintf(&b, "[Binary Data (%s)]\n", c.MIMEType)
		}
		parts = append(parts, map[string]any{"uri": c.URI, "mimeType": c.MIMEType, "text": c.Text, "blobBytes": len(c.Blob)})
	}
	text := b.String()
	if text == "" {
		text = "No content returned from resource."
	}
	return tools.Result{
		LLMContent: text,
		Display:    fmt.Sprintf("Successfully read resource %q from server %q", r.r.Name, s.name),
		Data:       map[string]any{"server": s.name, "uri": r.r.URI, "contents": parts},
	}, nil
}
