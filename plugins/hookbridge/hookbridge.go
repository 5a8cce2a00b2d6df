// Package hookbridge runs command hooks (package hooks) at gemini-cli's
// hook points. Its ADK plugin, placed after the processor chain, runs
// BeforeToolSelection, BeforeModel, AfterModel, BeforeTool and AfterTool;
// the session calls the agent and session points (SessionStart,
// BeforeAgent, AfterAgent, SessionEnd, Notification) through the Bridge.
package hookbridge

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/hooks"
	"github.com/agentry-dev/agentry/runtime/handle"
	"github.com/agentry-dev/agentry/telemetry"
	"github.com/agentry-dev/agentry/tools"
)

// Name is the plugin's name.
const Name = "agentry-hooks"

// StoppedError is the cause of a stream a hook stopped (continue:
// false): the agent loop ends with the hook's reason as a warning, and the
// session stays usable, as gemini-cli's AgentExecutionStopped.
type StoppedError struct {
	// Event is the hook event that stopped the loop.
	Event hooks.Event
	// Reason is the hook's stop reason.
	Reason string
}

// Error implements error.
func (e *StoppedError) Error() string {
	return fmt.Sprintf("agent execution stopped by a %s hook: %s", e.Event, e.Reason)
}

// Bridge runs command hooks at gemini-cli's hook points. The model and
// tool events ride on an ADK plugin placed after the processor chain, so
// BeforeModel hooks see the processed request; the agent and session
// events are called by the session itself. A hook that fails never fails
// the run: the hooks package applies the configured default decision and
// the failure is reported as a warning on the stream.
type Bridge struct {
	r   *hooks.Runner
	tel *telemetry.Telemetry
}

// New returns the bridge of runner's hooks; tel, when set, records a span
// per hook event.
func New(runner *hooks.Runner, tel *telemetry.Telemetry) *Bridge {
	return &Bridge{r: runner, tel: tel}
}

// Plugin returns the ADK plugin that runs the model and tool hook events.
func (h *Bridge) Plugin() (*plugin.Plugin, error) {
	return plugin.New(plugin.Config{
		Name:                Name,
		BeforeModelCallback: h.beforeModel,
		AfterModelCallback:  h.afterModel,
		BeforeToolCallback:  h.beforeTool,
		AfterToolCallback:   h.afterTool,
	})
}

// Run runs the hooks of event and reports their failures on s (nil: not
// reported).
func (h *Bridge) Run(ctx context.Context, s handle.Stream, event hooks.Event, target string, input map[string]any) hooks.Result {
	if !h.r.Has(event) {
		return hooks.Result{}
	}
	hctx, span := h.tel.StartHook(ctx, string(event), target)
	res, err := h.r.Run(hctx, event, target, input)
	span.End(res.Decision, err)
	for _, f := range res.Failures {
		warn(s, fmt.Sprintf("Hook %s failed (%v); its default decision applies", f.Hook, f.Err))
	}
	if res.SystemMessage != "" && !res.SuppressOutput {
		warn(s, res.SystemMessage)
	}
	return res
}

// warn shows a message to the user as a non-fatal error event, which
// drivers print as a warning.
func warn(s handle.Stream, msg string) {
	if s != nil {
		s.Warn("HOOK", msg)
	}
}

// stop ends the stream for a hook that said continue: false.
func stopStream(s handle.Stream, event hooks.Event, res hooks.Result) error {
	err := &StoppedError{Event: event, Reason: res.Reason}
	if s != nil {
		s.Cancel(err)
	}
	return err
}

// beforeModel runs BeforeToolSelection, then BeforeModel.
func (h *Bridge) beforeModel(ctx agent.Context, req *model.LLMRequest) (*model.LLMResponse, error) {
	s := handle.From(ctx)
	if h.r.Has(hooks.BeforeToolSelection) {
		res := h.Run(ctx, s, hooks.BeforeToolSelection, "", map[string]any{"llm_request": hookRequest(req)})
		if res.ToolConfig != nil {
			applyToolConfig(req, res.ToolConfig)
		}
	}
	if !h.r.Has(hooks.BeforeModel) {
		return nil, nil
	}
	res := h.Run(ctx, s, hooks.BeforeModel, "", map[string]any{"llm_request": hookRequest(req)})
	switch {
	case !res.Continue:
		return nil, stopStream(s, hooks.BeforeModel, res)
	case res.Blocked():
		if res.LLMResponse != nil {
			return modelResponse(res.LLMResponse), nil
		}
		return nil, fmt.Errorf("model call blocked by a BeforeModel hook: %s", res.Reason)
	}
	applyRequest(req, res.LLMRequest)
	if res.LLMResponse != nil {
		return modelResponse(res.LLMResponse), nil
	}
	return nil, nil
}

// afterModel runs AfterModel on each complete response. gemini-cli runs it
// on every streamed chunk; a process per chunk is too dear, so agentry's
// hooks see (and may replace) the whole response once.
func (h *Bridge) afterModel(ctx agent.Context, resp *model.LLMResponse, err error) (*model.LLMResponse, error) {
	if err != nil || resp == nil || resp.Partial || !h.r.Has(hooks.AfterModel) {
		return nil, nil
	}
	s := handle.From(ctx)
	res := h.Run(ctx, s, hooks.AfterModel, "", map[string]any{"llm_response": hookResponse(resp)})
	switch {
	case !res.Continue:
		return nil, stopStream(s, hooks.AfterModel, res)
	case res.Blocked():
		return nil, fmt.Errorf("model response blocked by an AfterModel hook: %s", res.Reason)
	case res.LLMResponse != nil:
		out := modelResponse(res.LLMResponse)
		out.UsageMetadata = resp.UsageMetadata
		return out, nil
	}
	return nil, nil
}

// beforeTool runs BeforeTool: block → the model gets gemini-cli's
// "Tool execution blocked" error; ask → the call needs confirmation
// whatever the policy says; changed input → merged into the arguments.
func (h *Bridge) beforeTool(ctx agent.Context, t tool.Tool, args map[string]any) (map[string]any, error) {
	if !h.r.Has(hooks.BeforeTool) {
		return nil, nil
	}
	s := handle.From(ctx)
	input := map[string]any{"tool_name": t.Name(), "tool_input": args}
	if mt, ok := mcpOf(t); ok {
		server, name, _ := mt.MCP()
		input["mcp_context"] = map[string]any{"server_name": server, "tool_name": name}
	}
	res := h.Run(ctx, s, hooks.BeforeTool, t.Name(), input)
	switch {
	case !res.Continue:
		return nil, stopStream(s, hooks.BeforeTool, res)
	case res.Blocked():
		return nil, tools.Errorf(tools.ErrPolicyViolation, "Tool execution blocked: %s", res.Reason)
	}
	maps.Copy(args, res.ToolInput)
	if res.Decision == hooks.DecisionAsk && s != nil {
		s.RequireApproval(ctx.FunctionCallID())
	}
	return nil, nil
}

// afterTool runs AfterTool: block replaces the result, added context is
// appended to what the model reads.
func (h *Bridge) afterTool(ctx agent.Context, t tool.Tool, args, result map[string]any, err error) (map[string]any, error) {
	if !h.r.Has(hooks.AfterTool) {
		return nil, nil
	}
	s := handle.From(ctx)
	resp := map[string]any{"llmContent": result["output"], "returnDisplay": result["output"]}
	if err != nil {
		resp["error"] = map[string]any{"message": err.Error()}
	} else if e, ok := result["error"]; ok {
		resp["error"] = map[string]any{"message": fmt.Sprint(e)}
	}
	res := h.Run(ctx, s, hooks.AfterTool, t.Name(), map[string]any{"tool_name": t.Name(), "tool_input": args, "tool_response": resp})
	switch {
	case !res.Continue:
		return nil, stopStream(s, hooks.AfterTool, res)
	case res.Blocked():
		return map[string]any{"error": "Tool result blocked: " + res.Reason}, nil
	case res.AdditionalContext != "":
		out := maps.Clone(result)
		if out == nil {
			out = map[string]any{}
		}
		key := "output"
		if _, ok := out[key]; !ok && out["error"] != nil {
			key = "error"
		}
		out[key] = fmt.Sprint(out[key]) + "\n\n<hook_context>" + res.AdditionalContext + "</hook_context>"
		return out, nil
	}
	return nil, nil
}

// BeforeAgent runs BeforeAgent for a prompt. It returns the content to
// run (with any added context) or, when a hook blocked or stopped it, a
// non-nil error to end the stream with.
func (h *Bridge) BeforeAgent(ctx context.Context, s handle.Stream, content *genai.Content) (*genai.Content, error) {
	if !h.r.Has(hooks.BeforeAgent) {
		return content, nil
	}
	res := h.Run(ctx, s, hooks.BeforeAgent, "", map[string]any{"prompt": handle.PromptText(content)})
	switch {
	case !res.Continue:
		return nil, &StoppedError{Event: hooks.BeforeAgent, Reason: res.Reason}
	case res.Blocked():
		return nil, &StoppedError{Event: hooks.BeforeAgent, Reason: res.Reason}
	}
	return withHookContext(content, res.AdditionalContext), nil
}

// AfterAgent runs AfterAgent once a prompt's run has finished. A hook
// that blocks or stops asks for another turn: the returned content (its
// reason as the prompt) is run next.
func (h *Bridge) AfterAgent(ctx context.Context, s handle.Stream, prompt, response string, active bool) *genai.Content {
	if !h.r.Has(hooks.AfterAgent) {
		return nil
	}
	res := h.Run(ctx, s, hooks.AfterAgent, "", map[string]any{
		"prompt": prompt, "prompt_response": response, "stop_hook_active": active,
	})
	if res.Blocked() || !res.Continue {
		return genai.NewContentFromText(res.Reason, genai.RoleUser)
	}
	return nil
}

// SessionStart runs gemini-cli's SessionStart for a session's first
// prompt: its added context goes with content.
func (h *Bridge) SessionStart(ctx context.Context, s handle.Stream, source string, content *genai.Content) *genai.Content {
	res := h.Run(ctx, s, hooks.SessionStart, source, map[string]any{"source": source})
	return withHookContext(content, res.AdditionalContext)
}

// withHookContext appends a hook's added context to a prompt, in
// gemini-cli's <hook_context> element.
func withHookContext(c *genai.Content, extra string) *genai.Content {
	if extra == "" || c == nil {
		return c
	}
	out := *c
	out.Parts = append(slices.Clip(c.Parts), &genai.Part{Text: "\n\n<hook_context>" + extra + "</hook_context>"})
	return &out
}

// hookRequest is gemini-cli's stable hook form of a model request: the
// model, text messages, the sampling config and the tool config.
func hookRequest(req *model.LLMRequest) map[string]any {
	var msgs []any
	for _, c := range req.Contents {
		if c == nil {
			continue
		}
		var b strings.Builder
		for _, p := range c.Parts {
			if p != nil && p.Text != "" && !p.Thought {
				b.WriteString(p.Text)
			}
		}
		if b.Len() > 0 {
			msgs = append(msgs, map[string]any{"role": c.Role, "content": b.String()})
		}
	}
	out := map[string]any{"model": req.Model, "messages": msgs}
	if cfg := req.Config; cfg != nil {
		conf := map[string]any{}
		if cfg.Temperature != nil {
			conf["temperature"] = *cfg.Temperature
		}
		if cfg.TopP != nil {
			conf["topP"] = *cfg.TopP
		}
		if cfg.TopK != nil {
			conf["topK"] = *cfg.TopK
		}
		if cfg.MaxOutputTokens > 0 {
			conf["maxOutputTokens"] = cfg.MaxOutputTokens
		}
		out["config"] = conf
		var names []string
		for _, t := range cfg.Tools {
			if t == nil {
				continue
			}
			for _, d := range t.FunctionDeclarations {
				names = append(names, d.Name)
			}
		}
		out["toolConfig"] = map[string]any{"mode": "AUTO", "allowedFunctionNames": names}
	}
	return out
}

// applyRequest applies a BeforeModel hook's request changes: the model
// and the sampling config. Messages are not taken back: the hook form
// holds text only, and replacing the history with it would drop every
// tool call.
func applyRequest(req *model.LLMRequest, change map[string]any) {
	if len(change) == 0 {
		return
	}
	if m, ok := change["model"].(string); ok && m != "" {
		req.Model = m
	}
	conf, _ := change["config"].(map[string]any)
	if len(conf) == 0 {
		return
	}
	if req.Config == nil {
		req.Config = &genai.GenerateContentConfig{}
	}
	if v, ok := conf["temperature"].(float64); ok {
		req.Config.Temperature = genai.Ptr(float32(v))
	}
	if v, ok := conf["topP"].(float64); ok {
		req.Config.TopP = genai.Ptr(float32(v))
	}
	if v, ok := conf["topK"].(float64); ok {
		req.Config.TopK = genai.Ptr(float32(v))
	}
	if v, ok := conf["maxOutputTokens"].(float64); ok {
		req.Config.MaxOutputTokens = int32(v)
	}
}

// applyToolConfig restricts a request's tools as BeforeToolSelection
// asks, in the declarations the model sees and in the dispatch map, so a
// filtered tool cannot be called either (ADK has no tool-selection hook).
func applyToolConfig(req *model.LLMRequest, tc *hooks.ToolConfig) {
	allowed := map[string]bool{}
	for _, n := range tc.AllowedFunctionNames {
		allowed[n] = true
	}
	keep := func(name string) bool {
		switch tc.Mode {
		case "NONE":
			return false
		}
		return len(allowed) == 0 || allowed[name]
	}
	if req.Config != nil {
		for _, t := range req.Config.Tools {
			if t != nil {
				t.FunctionDeclarations = slices.DeleteFunc(slices.Clone(t.FunctionDeclarations), func(d *genai.FunctionDeclaration) bool {
					return !keep(d.Name)
				})
			}
		}
	}
	for name := range req.Tools {
		if !keep(name) {
			delete(req.Tools, name)
		}
	}
}

// hookResponse is gemini-cli's hook form of a model response.
func hookResponse(resp *model.LLMResponse) map[string]any {
	var parts []any
	var text strings.Builder
	if resp.Content != nil {
		for _, p := range resp.Content.Parts {
			if p != nil && p.Text != "" && !p.Thought {
				parts = append(parts, p.Text)
				text.WriteString(p.Text)
			}
		}
	}
	out := map[string]any{
		"text":       text.String(),
		"candidates": []any{map[string]any{"content": map[string]any{"role": genai.RoleModel, "parts": parts}, "finishReason": string(resp.FinishReason)}},
	}
	if u := resp.UsageMetadata; u != nil {
		out["usageMetadata"] = map[string]any{"promptTokenCount": u.PromptTokenCount, "candidatesTokenCount": u.CandidatesTokenCount, "totalTokenCount": u.TotalTokenCount}
	}
	return out
}

// modelResponse builds a response from a hook's llm_response: the text of
// its first candidate (or its text field).
func modelResponse(m map[string]any) *model.LLMResponse {
	var b strings.Builder
	if cands, ok := m["candidates"].([]any); ok && len(cands) > 0 {
		if c, ok := cands[0].(map[string]any); ok {
			if content, ok := c["content"].(map[string]any); ok {
				if parts, ok := content["parts"].([]any); ok {
					for _, p := range parts {
						switch v := p.(type) {
						case string:
							b.WriteString(v)
						case map[string]any:
							if s, ok := v["text"].(string); ok {
								b.WriteString(s)
							}
						}
					}
				}
			}
		}
	}
	if b.Len() == 0 {
		if s, ok := m["text"].(string); ok {
			b.WriteString(s)
		}
	}
	return &model.LLMResponse{
		Content:      genai.NewContentFromText(b.String(), genai.RoleModel),
		FinishReason: genai.FinishReasonStop,
		TurnComplete: true,
	}
}

// mcpTool is implemented by MCP tools, for the hooks' mcp_context.
type mcpTool interface {
	MCP() (server, tool string, trust bool)
}

// mcpOf returns the MCP identity behind an ADK tool (the session's
// scheduled tools unwrap to agentry's), if any.
func mcpOf(t tool.Tool) (mcpTool, bool) {
	u, ok := t.(interface{ Unwrap() tools.Tool })
	if !ok {
		return nil, false
	}
	m, ok := u.Unwrap().(mcpTool)
	return m, ok
}

// SessionHook runs a session-level event outside any stream (SessionEnd),
// bounded so that a slow hook cannot hold up an exit for long.
func (h *Bridge) SessionHook(event hooks.Event, target string, input map[string]any, log func(msg string, args ...any)) {
	if !h.r.Has(event) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := h.r.Run(ctx, event, target, input)
	for _, f := range res.Failures {
		log("hook failed", "hook", f.Hook, "event", string(event), "err", f.Err)
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		log("hooks failed", "event", string(event), "err", err)
	}
}
