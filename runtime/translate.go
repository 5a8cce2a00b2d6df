package runtime

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/tools"
)

// translator turns the ADK events of one stream into protocol events, as
// gemini-cli's event translator turns its stream events: text deltas become
// agent messages, function calls tool_requests, function responses
// tool_responses, usage metadata usage events.
type translator struct {
	s  *Session
	st *stream
	ss *streamState

	// streamed is set once a partial event carried text for the model
	// response under way, so its complete event does not repeat the text.
	streamed bool
	// finish comes from the last complete model response.
	finish genai.FinishReason
	names  map[string]string // pending call id -> tool name
}

func newTranslator(s *Session, st *stream, ss *streamState) *translator {
	return &translator{s: s, st: st, ss: ss, names: map[string]string{}}
}

func (t *translator) emit(ev Event) { t.s.emit(t.st, ev) }

func (t *translator) translate(ev *session.Event) {
	if ev == nil || ev.Author == "user" {
		return
	}
	if ev.Partial {
		if ev.Content != nil && t.emitParts(ev.Content.Parts) {
			t.streamed = true
		}
		return
	}
	if ev.Content == nil {
		if ev.ErrorCode != "" {
			t.finish = ev.FinishReason
		}
		return
	}
	var responses []*genai.FunctionResponse
	var calls []*genai.FunctionCall
	for _, p := range ev.Content.Parts {
		switch {
		case p.FunctionResponse != nil:
			responses = append(responses, p.FunctionResponse)
		case p.FunctionCall != nil:
			calls = append(calls, p.FunctionCall)
		}
	}
	if len(responses) > 0 {
		for _, fr := range responses {
			t.toolResponse(fr)
		}
		return
	}
	// A complete model response.
	if !t.streamed {
		t.emitParts(ev.Content.Parts)
	}
	t.streamed = false
	t.finish = ev.FinishReason
	for _, fc := range calls {
		t.toolRequest(fc)
	}
	t.usage(ev)
}

// emitParts emits the message content of model parts, if they have any,
// and reports whether they had.
func (t *translator) emitParts(parts []*genai.Part) bool {
	// A streamed delta is almost always one text part: its message and
	// content share one allocation.
	if len(parts) == 1 {
		one := &singlePartMessage{}
		if !convertPart(parts[0], &one.part[0]) {
			return false
		}
		one.msg = Message{Role: RoleAgent, Content: one.part[:]}
		t.emit(Event{Type: EventMessage, Meta: messageMeta(one.part[0].Type == PartThought), Message: &one.msg})
		return true
	}
	content := fromGenaiParts(parts)
	if len(content) == 0 {
		return false
	}
	t.emitMessage(content)
	return true
}

// singlePartMessage is a message of one content part, allocated together.
type singlePartMessage struct {
	msg  Message
	part [1]ContentPart
}

// messageMeta is the _meta of an agent message: thoughts carry
// source "agent", as gemini-cli's Thought events do; text none.
func messageMeta(thought bool) map[string]any {
	if thought {
		return map[string]any{"source": "agent"}
	}
	return nil
}

// emitMessage emits an agent message; thoughts travel in their own message
// with _meta.source, as gemini-cli emits Thought events.
func (t *translator) emitMessage(parts []ContentPart) {
	thoughts := 0
	for _, p := range parts {
		if p.Type == PartThought {
			thoughts++
		}
	}
	// Content of one kind, the usual case, is the message as it is.
	text, thought := parts, []ContentPart(nil)
	switch thoughts {
	case 0:
	case len(parts):
		text, thought = nil, parts
	default:
		text, thought = make([]ContentPart, 0, len(parts)-thoughts), make([]ContentPart, 0, thoughts)
		for _, p := range parts {
			if p.Type == PartThought {
				thought = append(thought, p)
			} else {
				text = append(text, p)
			}
		}
	}
	if len(thought) > 0 {
		t.emit(Event{Type: EventMessage, Meta: messageMeta(true), Message: &Message{Role: RoleAgent, Content: thought}})
	}
	if len(text) > 0 {
		t.emit(Event{Type: EventMessage, Message: &Message{Role: RoleAgent, Content: text}})
	}
}

func (t *translator) toolRequest(fc *genai.FunctionCall) {
	t.names[fc.ID] = fc.Name
	args := fc.Args
	if args == nil {
		args = map[string]any{}
	}
	req := &ToolRequest{RequestID: fc.ID, Name: fc.Name, Args: args}
	var meta map[string]any
	if tl, ok := t.s.cfg.tools.current().byName[fc.Name]; ok {
		desc := tl.Describe(args)
		req.Display = &ToolDisplay{Name: tl.DisplayName(), Description: desc}
		meta = map[string]any{"legacyState": map[string]any{
			"displayName": tl.DisplayName(), "description": desc, "kind": string(tl.Kind()),
		}}
	}
	t.emit(Event{Type: EventToolRequest, Meta: meta, ToolRequest: req})
}

func (t *translator) toolResponse(fr *genai.FunctionResponse) {
	name := fr.Name
	if name == "" {
		name = t.names[fr.ID]
	}
	delete(t.names, fr.ID)
	resp := &ToolResponse{RequestID: fr.ID, Name: name}
	data := map[string]any{}
	info := t.ss.call(fr.ID)
	if msg, isErr := fr.Response["error"]; isErr {
		resp.IsError = true
		text := fmt.Sprint(msg)
		resp.Content = []ContentPart{TextPart(text)}
		errType := tools.ErrExecutionFailed
		if info != nil && info.errType != "" {
			errType = info.errType
		}
		data["errorType"] = string(errType)
		// gemini-cli shows a failed call's own summary, else its error.
		if info != nil && info.errDisplay != "" {
			text = info.errDisplay
		}
		resp.Display = &ToolDisplay{Result: &DisplayContent{Type: "text", Text: text}}
		if info != nil && info.tool != nil {
			resp.Display.Name = info.tool.DisplayName()
		}
	} else {
		resp.Content = []ContentPart{TextPart(responseText(fr.Response))}
		if info != nil {
			resp.Display = resultDisplay(info)
		}
	}
	if info != nil {
		for k, v := range info.result.Data {
			data[k] = v
		}
		if d := info.result.Diff; d != nil {
			data["diffStat"] = map[string]any{"linesAdded": d.LinesAdded, "linesRemoved": d.LinesRemoved}
		}
		data["durationMs"] = info.durationMs
		if info.decision != "" {
			data["decision"] = info.decision
		}
		if info.outputFile != "" {
			// gemini-cli's tool_response data names the file holding
			// the full output the model saw truncated.
			data["outputFile"] = info.outputFile
		}
	}
	if len(data) > 0 {
		resp.Data = data
	}
	t.emit(Event{Type: EventToolResponse, ToolResponse: resp})
}

// cancelledCall reports a call that an abort cut off.
func (t *translator) cancelledCall(fc *genai.FunctionCall, msg string) {
	t.emit(Event{Type: EventToolResponse, ToolResponse: &ToolResponse{
		RequestID: fc.ID, Name: fc.Name, IsError: true,
		Content: []ContentPart{TextPart(msg)},
		Display: &ToolDisplay{Result: &DisplayContent{Type: "text", Text: msg}},
		Data:    map[string]any{"errorType": string(tools.ErrCancelled)},
	}})
}

func resultDisplay(info *callInfo) *ToolDisplay {
	d := &ToolDisplay{}
	if info.tool != nil {
		d.Name = info.tool.DisplayName()
	}
	switch {
	case info.result.Diff != nil:
		diff := info.result.Diff
		d.Result = &DisplayContent{Type: "diff", Path: diff.Path, BeforeText: diff.Before, AfterText: diff.After}
		d.ResultSummary = info.result.Display
	case info.result.Display != "":
		d.Result = &DisplayContent{Type: "text", Text: info.result.Display}
		d.ResultSummary = info.result.Summary
	case info.result.Summary != "":
		d.ResultSummary = info.result.Summary
	default:
		if d.Name == "" {
			return nil
		}
	}
	return d
}

// responseText is the text the model received from a function response.
func responseText(resp map[string]any) string {
	if out, ok := resp["output"].(string); ok && len(resp) == 1 {
		return out
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return fmt.Sprint(resp)
	}
	return string(b)
}

func (t *translator) usage(ev *session.Event) {
	model := t.ss.model
	if m, ok := ev.CustomMetadata[metaModel].(string); ok {
		model = m
	}
	var d int64
	switch v := ev.CustomMetadata[metaDurationMs].(type) {
	case int64:
		d = v
	case float64: // decoded from a stored event
		d = int64(v)
	}
	t.emit(usageEvent(model, ev.UsageMetadata, d))
}

// usageEvent reports one model call of the main thread: its model, tokens
// and latency.
func usageEvent(model string, md *genai.GenerateContentResponseUsageMetadata, durationMs int64) Event {
	u := &Usage{Model: model}
	meta := map[string]any{"role": "main", "durationMs": durationMs}
	if md != nil {
		u.InputTokens = intPtr(md.PromptTokenCount)
		u.OutputTokens = intPtr(md.CandidatesTokenCount)
		u.CachedTokens = intPtr(md.CachedContentTokenCount)
		meta["totalTokens"] = md.TotalTokenCount
		meta["thoughtsTokens"] = md.ThoughtsTokenCount
		meta["toolTokens"] = md.ToolUsePromptTokenCount
	}
	return Event{Type: EventUsage, Meta: meta, Usage: u}
}

func intPtr(n int32) *int {
	v := int(n)
	return &v
}

// endReason maps the last finish reason as gemini-cli's mapFinishReason does.
func (t *translator) endReason() EndReason {
	return mapFinishReason(t.finish)
}

func mapFinishReason(r genai.FinishReason) EndReason {
	switch r {
	case "", genai.FinishReasonStop, genai.FinishReasonUnspecified:
		return EndCompleted
	case genai.FinishReasonMaxTokens:
		return EndMaxBudget
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonLanguage,
		genai.FinishReasonBlocklist, genai.FinishReasonProhibitedContent, genai.FinishReasonSPII,
		genai.FinishReasonImageSafety, genai.FinishReasonImageProhibitedContent:
		return EndRefusal
	}
	return EndFailed
}

// fromGenaiParts converts model parts to content parts, skipping function
// calls and responses (they become tool events), as gemini-cli does.
func fromGenaiParts(parts []*genai.Part) []ContentPart {
	var out []ContentPart
	for _, p := range parts {
		var cp ContentPart
		if !convertPart(p, &cp) {
			continue
		}
		if out == nil {
			out = make([]ContentPart, 0, len(parts))
		}
		out = append(out, cp)
	}
	return out
}

// convertPart converts one model part into *cp and reports whether the
// part is message content.
func convertPart(p *genai.Part, cp *ContentPart) bool {
	switch {
	case p == nil, p.FunctionCall != nil, p.FunctionResponse != nil:
		return false
	case p.Text != "" && p.Thought:
		*cp = ContentPart{Type: PartThought, Thought: p.Text}
		if len(p.ThoughtSignature) > 0 {
			cp.ThoughtSignature = base64.StdEncoding.EncodeToString(p.ThoughtSignature)
		}
	case p.Text != "":
		*cp = TextPart(p.Text)
	case p.InlineData != nil:
		*cp = ContentPart{Type: PartMedia, Data: base64.StdEncoding.EncodeToString(p.InlineData.Data), MimeType: p.InlineData.MIMEType}
	case p.FileData != nil:
		*cp = ContentPart{Type: PartMedia, URI: p.FileData.FileURI, MimeType: p.FileData.MIMEType}
	default:
		return false
	}
	return true
}

// toGenaiContent converts a user message to a genai user content.
func toGenaiContent(parts []ContentPart) (*genai.Content, error) {
	c := &genai.Content{Role: genai.RoleUser}
	for i, p := range parts {
		switch p.Type {
		case PartText, PartReference:
			c.Parts = append(c.Parts, &genai.Part{Text: p.Text})
		case PartThought:
			gp := &genai.Part{Text: p.Thought, Thought: true}
			if p.ThoughtSignature != "" {
				sig, err := base64.StdEncoding.DecodeString(p.ThoughtSignature)
				if err != nil {
					return nil, fmt.Errorf("content[%d]: thoughtSignature is not base64: %w", i, err)
				}
				gp.ThoughtSignature = sig
			}
			c.Parts = append(c.Parts, gp)
		case PartMedia:
			switch {
			case p.Data != "":
				data, err := base64.StdEncoding.DecodeString(p.Data)
				if err != nil {
					return nil, fmt.Errorf("content[%d]: media data is not base64: %w", i, err)
				}
				mime := p.MimeType
				if mime == "" {
					mime = "application/octet-stream"
				}
				c.Parts = append(c.Parts, &genai.Part{InlineData: &genai.Blob{Data: data, MIMEType: mime}})
			case p.URI != "":
				c.Parts = append(c.Parts, &genai.Part{FileData: &genai.FileData{FileURI: p.URI, MIMEType: p.MimeType}})
			default:
				return nil, fmt.Errorf("content[%d]: media part needs data or uri", i)
			}
		default:
			return nil, fmt.Errorf("content[%d]: unknown part type %q", i, p.Type)
		}
	}
	if len(c.Parts) == 0 || strings.TrimSpace(joinText(c.Parts)) == "" && !hasNonText(c.Parts) {
		return nil, errors.New("the message is empty")
	}
	return c, nil
}

func joinText(parts []*genai.Part) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func hasNonText(parts []*genai.Part) bool {
	for _, p := range parts {
		if p.InlineData != nil || p.FileData != nil {
			return true
		}
	}
	return false
}
