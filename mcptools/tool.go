package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/tools"
)

// Tool is one tool of an MCP server, as an agentry tool.
type Tool struct {
	srv  *server
	name string // the name the model calls
	tool string // the server's name for it
	decl *genai.FunctionDeclaration
	ann  map[string]any // the tool's annotations as JSON values; nil when it has none
}

var (
	_ tools.Tool        = (*Tool)(nil)
	_ tools.Truncatable = (*Tool)(nil)
)

func newTool(srv *server, name string, t *mcp.Tool) *Tool {
	schema := normalizeSchema(t.InputSchema)
	if schema == nil {
		schema = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return &Tool{
		srv:  srv,
		name: name,
		tool: t.Name,
		ann:  annotations(t.Annotations),
		decl: &genai.FunctionDeclaration{
			Name:                 name,
			Description:          t.Description,
			ParametersJsonSchema: schema,
		},
	}
}

// Name returns the function name the model calls: the MCP tool name, or
// "<server>__<tool>" when several servers offer that name.
func (t *Tool) Name() string { return t.name }

// DisplayName returns gemini-cli's display form, "tool (server MCP Server)".
func (t *Tool) DisplayName() string {
	return fmt.Sprintf("%s (%s MCP Server)", t.tool, t.srv.name)
}

// Kind returns tools.KindOther: an MCP tool may do anything.
func (t *Tool) Kind() tools.Kind { return tools.KindOther }

// Declaration returns the declaration built from the tool's input schema.
func (t *Tool) Declaration() *genai.FunctionDeclaration { return t.decl }

// Describe returns the arguments as JSON, as gemini-cli describes MCP calls.
func (t *Tool) Describe(args map[string]any) string {
	if len(args) == 0 {
		return "{}"
	}
	b, err := json.Marshal(args)
	if err != nil {
		return fmt.Sprint(args)
	}
	return string(b)
}

// TruncatesOutput reports true: like gemini-cli, the scheduler may truncate
// an MCP tool's text output.
func (t *Tool) TruncatesOutput() bool { return true }

// MCP returns the server name, the tool's name on that server and whether
// the server is trusted, for approval prompts (McpDetails) and policy.
func (t *Tool) MCP() (server, tool string, trust bool) {
	return t.srv.name, t.tool, t.srv.cfg.Trust
}

// Annotations returns the tool's MCP annotations (readOnlyHint,
// destructiveHint, …) as JSON values, for policy rules with
// toolAnnotations; nil when the server gave none. The map is the tool's
// own: callers must not change it.
func (t *Tool) Annotations() map[string]any { return t.ann }

// annotations converts a tool's annotations to JSON values.
func annotations(a *mcp.ToolAnnotations) map[string]any {
	if a == nil {
		return nil
	}
	raw, err := json.Marshal(a)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// Execute calls the tool on its server, within the server's timeout,
// forwarding progress notifications to call.Output. If the server died since
// the last call it is reconnected (a stdio server is restarted) first. A
// tool error, a timeout or a transport failure is returned as *tools.Error;
// after a transport failure the server is restarted by the next call.
func (t *Tool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	s := t.srv
	sess, listed, err := s.session(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, fmt.Errorf("mcp tool %q: %w", t.name, context.Cause(ctx))
		}
		return tools.Result{}, &tools.Error{Type: tools.ErrExecutionFailed,
			Msg: fmt.Sprintf("MCP server %q is unavailable: %v", s.name, err), Err: err}
	}
	if !t.offered() {
		why := "no longer offers"
		if listed {
			why = "was started and does not offer"
		}
		return tools.Result{}, tools.Errorf(tools.ErrToolNotRegistered,
			"MCP server %q %s tool %q; it was removed from the tools offered", s.name, why, t.tool)
	}

	tok, sink := s.register()
	defer s.unregister(tok)
	callCtx, cancel := s.scope(ctx, timeout(s.cfg))
	defer cancel()
	args := call.Args
	if args == nil {
		// A nil map would be sent as null; servers require an object.
		args = map[string]any{}
	}
	params := &mcp.CallToolParams{Name: t.tool, Arguments: args}
	params.SetProgressToken(tok)

	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := sess.CallTool(callCtx, params)
		done <- outcome{res, err}
	}()
	flush := func() {
		for _, line := range sink.take() {
			if call.Output != nil {
				call.Output(line)
			}
		}
	}
	var out outcome
wait:
	for {
		select {
		case <-sink.ready:
			flush()
		case out = <-done:
			flush()
			break wait
		}
	}

	if out.err != nil {
		return tools.Result{}, t.callError(ctx, callCtx, sess, out.err)
	}
	if out.res.IsError {
		msg := strings.TrimSpace(render(out.res.Content).llm)
		if msg == "" {
			msg = "(no message)"
		}
		return tools.Result{Data: t.data(out.res)}, tools.Errorf(tools.ErrExecutionFailed,
			"MCP tool %q (server %q) reported an error: %s", t.tool, s.name, msg)
	}
	r := render(out.res.Content)
	if r.llm == "" && out.res.StructuredContent != nil {
		if b, err := json.Marshal(out.res.StructuredContent); err == nil {
			r.llm, r.display = string(b), string(b)
		}
	}
	return tools.Result{LLMContent: r.llm, Display: r.display, Data: t.data(out.res)}, nil
}

// offered reports whether the server's current tool list has t's tool.
func (t *Tool) offered() bool { return t.srv.tool(t.tool) != nil }

// callError classifies a failed CallTool: the caller's cancellation is
// returned as such; a timeout, a Manager being closed and an error response
// are tool errors; anything else is a transport failure, after which the
// server is marked dead so the next call restarts it.
func (t *Tool) callError(ctx, callCtx context.Context, sess *mcp.ClientSession, err error) error {
	s := t.srv
	if ctx.Err() != nil {
		return fmt.Errorf("mcp tool %q: %w", t.name, context.Cause(ctx))
	}
	if cause := context.Cause(callCtx); cause != nil {
		var to timeoutError
		if errors.As(cause, &to) {
			return &tools.Error{Type: tools.ErrExecutionFailed,
				Msg: fmt.Sprintf("MCP tool %q (server %q) timed out after %s", t.tool, s.name, to.d), Err: cause}
		}
		return &tools.Error{Type: tools.ErrExecutionFailed,
			Msg: fmt.Sprintf("MCP tool %q (server %q) was stopped: %v", t.tool, s.name, cause), Err: cause}
	}
	if isWireError(err) {
		return &tools.Error{Type: tools.ErrExecutionFailed,
			Msg: fmt.Sprintf("MCP tool %q (server %q) failed: %v", t.tool, s.name, err), Err: err}
	}
	s.log.Warn("mcp call failed; server marked dead", "tool", t.tool, "err", err)
	s.markDead(sess)
	return &tools.Error{Type: tools.ErrExecutionFailed,
		Msg: fmt.Sprintf("MCP server %q failed during tool %q: %v; it will be restarted on the next call", s.name, t.tool, err),
		Err: err}
}

// data returns the structured details of a result for drivers.
func (t *Tool) data(res *mcp.CallToolResult) map[string]any {
	d := map[string]any{
		"server":  t.srv.name,
		"tool":    t.tool,
		"content": res.Content,
	}
	if res.StructuredContent != nil {
		d["structuredContent"] = res.StructuredContent
	}
	return d
}

// rendered is a result's content as text for the model and for display.
type rendered struct{ llm, display string }

// render turns MCP content into text. Text parts are kept; other parts
// become one short description line each, because agentry's tool results
// are text (gemini-cli instead passes images and blobs to the model as
// inline data).
func render(content []mcp.Content) rendered {
	var llm, disp []string
	for _, c := range content {
		switch c := c.(type) {
		case *mcp.TextContent:
			llm = append(llm, c.Text)
			disp = append(disp, c.Text)
		case *mcp.ImageContent:
			llm = append(llm, fmt.Sprintf("[%s, %d bytes]", mime(c.MIMEType), len(c.Data)))
			disp = append(disp, fmt.Sprintf("[Image: %s]", mime(c.MIMEType)))
		case *mcp.AudioContent:
			llm = append(llm, fmt.Sprintf("[%s, %d bytes]", mime(c.MIMEType), len(c.Data)))
			disp = append(disp, fmt.Sprintf("[Audio: %s]", mime(c.MIMEType)))
		case *mcp.ResourceLink:
			title := c.Title
			if title == "" {
				title = c.Name
			}
			llm = append(llm, fmt.Sprintf("Resource Link: %s at %s", title, c.URI))
			disp = append(disp, fmt.Sprintf("[Link to %s: %s]", title, c.URI))
		case *mcp.EmbeddedResource:
			r := c.Resource
			switch {
			case r == nil:
				llm = append(llm, "[empty resource]")
				disp = append(disp, "[Embedded Resource: unknown type]")
			case r.Text != "":
				llm = append(llm, r.Text)
				disp = append(disp, r.Text)
			default:
				llm = append(llm, fmt.Sprintf("[resource %s: %s, %d bytes]", r.URI, mime(r.MIMEType), len(r.Blob)))
				disp = append(disp, fmt.Sprintf("[Embedded Resource: %s]", mime(r.MIMEType)))
			}
		default:
			llm = append(llm, fmt.Sprintf("[unsupported content %T]", c))
			disp = append(disp, fmt.Sprintf("[Unknown content type: %T]", c))
		}
	}
	return rendered{strings.Join(llm, "\n"), strings.Join(disp, "\n")}
}

func mime(m string) string {
	if m == "" {
		return "application/octet-stream"
	}
	return m
}

// normalizeSchema copies an input schema, rewriting a two-element type
// array with "null" into the other type plus nullable, as gemini-cli does
// for models that reject type arrays. Anything that is not a JSON object is
// round-tripped through JSON first (the SDK may hand back raw messages).
func normalizeSchema(schema any) any {
	if schema == nil {
		return nil
	}
	if raw, ok := schema.(json.RawMessage); ok && !bytes.Contains(raw, []byte(`"null"`)) {
		// A cached schema without a null type: sent as it is.
		return raw
	}
	if _, ok := schema.(map[string]any); !ok {
		b, err := json.Marshal(schema)
		if err != nil {
			return schema
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return schema
		}
		schema = v
	}
	if !hasNullTypeArray(schema) {
		// Nothing to rewrite: the schema is the listing's own, which
		// nothing changes, so it is used as it is.
		return schema
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(v))
			for k, x := range v {
				out[k] = walk(x)
			}
			if ts, ok := out["type"].([]any); ok && len(ts) == 2 {
				for i, x := range ts {
					if x == "null" {
						if other, ok := ts[1-i].(string); ok {
							out["type"] = other
							out["nullable"] = true
						}
						break
					}
				}
			}
			return out
		case []any:
			out := make([]any, len(v))
			for i, x := range v {
				out[i] = walk(x)
			}
			return out
		}
		return v
	}
	return walk(schema)
}

// hasNullTypeArray reports whether v has a "type" array normalizeSchema
// would rewrite.
func hasNullTypeArray(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		if ts, ok := v["type"].([]any); ok && len(ts) == 2 && (ts[0] == "null" || ts[1] == "null") {
			return true
		}
		for _, x := range v {
			if hasNullTypeArray(x) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if hasNullTypeArray(x) {
				return true
			}
		}
	}
	return false
}
