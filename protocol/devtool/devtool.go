// Package devtool holds the schemas of gemini-cli's A2A development-tool
// extension: the agent settings a client sends with its first message, the
// DevelopmentToolEvent that keys every status update, the ToolCall and
// AgentThought data parts, the client's ToolCallConfirmation, the slash
// command schemas, and the extension URI with its semantic version.
//
// JSON field names are the proto field names of the extension's RFC
// (tool_call_id, selected_option_id), as its example messages spell them;
// readers also accept the lowerCamelCase names of proto's JSON mapping, so
// clients generated from the .proto files work too. Enum values are their
// names (PENDING, TOOL_CALL_UPDATE).
package devtool

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// URI identifies the extension: the agent card lists it, metadata objects
// are keyed by it, and clients name it in the A2A-Extensions header. Its
// path carries the extension's major version (v0).
const URI = uriPrefix + "v0" + uriSuffix

const (
	uriPrefix = "https://github.com/google-gemini/gemini-cli/blob/main/docs/a2a/developer-profile/"
	uriSuffix = "/spec.md"
)

// Version returns the version of the extension this package implements.
func Version() SemVer { return SemVer{Major: 0, Minor: 1, Patch: 0} }

// ErrIncompatible reports a request for a version of the extension this
// implementation cannot serve.
var ErrIncompatible = errors.New("incompatible version of the development-tool extension")

// Supports reports whether uri names this extension and, if so, whether
// this implementation serves the version it asks for: err wraps
// ErrIncompatible for a version it cannot serve, and is a plain error for
// a malformed one.
func Supports(uri string) (ours bool, err error) {
	v, parts, ours, err := ParseURI(uri)
	if !ours || err != nil {
		return ours, err
	}
	if !Compatible(v, parts, Version()) {
		return true, fmt.Errorf("%w: %s is not compatible: it asks for %s, this server speaks %s (%s)", ErrIncompatible, uri, v, Version(), URI)
	}
	return true, nil
}

// Description is the extension's description on the agent card.
const Description = "An extension for interactive development tasks, enabling features like code generation, tool usage, and real-time status updates."

// SemVer is a semantic version (Semantic Versioning 2.0.0) without
// pre-release or build parts.
type SemVer struct{ Major, Minor, Patch int }

// String returns "vMAJOR.MINOR.PATCH".
func (v SemVer) String() string { return fmt.Sprintf("v%d.%d.%d", v.Major, v.Minor, v.Patch) }

// ParseURI reports whether uri names this extension and, if so, the
// version in its path ("v0", "v0.1" or "v0.1.0"); missing parts are zero
// and partial reports which parts were given.
func ParseURI(uri string) (v SemVer, parts int, ok bool, err error) {
	if !strings.HasPrefix(uri, uriPrefix) || !strings.HasSuffix(uri, uriSuffix) {
		return SemVer{}, 0, false, nil
	}
	raw := strings.TrimSuffix(strings.TrimPrefix(uri, uriPrefix), uriSuffix)
	if !strings.HasPrefix(raw, "v") {
		return SemVer{}, 0, true, fmt.Errorf("extension URI %s: version %q must start with v", uri, raw)
	}
	fields := strings.Split(raw[1:], ".")
	if len(fields) > 3 {
		return SemVer{}, 0, true, fmt.Errorf("extension URI %s: version %q has more than three parts", uri, raw)
	}
	nums := [3]int{}
	for i, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 || (len(f) > 1 && f[0] == '0') {
			return SemVer{}, 0, true, fmt.Errorf("extension URI %s: version %q is not MAJOR[.MINOR[.PATCH]] with numbers without leading zeros", uri, raw)
		}
		nums[i] = n
	}
	return SemVer{nums[0], nums[1], nums[2]}, len(fields), true, nil
}

// Compatible reports whether a client asking for version want (with parts
// of it given) can talk to an implementation of have, by Semantic
// Versioning's rules: the major versions must match; below 1.0.0 anything
// may change between minor versions, so a client that names a minor
// version needs that minor; and a client needs no feature newer than have.
func Compatible(want SemVer, parts int, have SemVer) bool {
	if want.Major != have.Major {
		return false
	}
	if parts < 2 {
		return true
	}
	if have.Major == 0 {
		if want.Minor != have.Minor {
			return false
		}
		return parts < 3 || want.Patch <= have.Patch
	}
	if want.Minor != have.Minor {
		return want.Minor < have.Minor
	}
	return parts < 3 || want.Patch <= have.Patch
}

// EventKind is a DevelopmentToolEvent's kind.
type EventKind string

// The event kinds.
const (
	KindToolCallConfirmation EventKind = "TOOL_CALL_CONFIRMATION"
	KindToolCallUpdate       EventKind = "TOOL_CALL_UPDATE"
	KindTextContent          EventKind = "TEXT_CONTENT"
	KindStateChange          EventKind = "STATE_CHANGE"
	KindThought              EventKind = "THOUGHT"
)

// Event is the DevelopmentToolEvent a status update's metadata carries
// under URI.
type Event struct {
	Kind     EventKind `json:"kind"`
	Model    string    `json:"model,omitempty"`
	UserTier string    `json:"user_tier,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// Metadata returns the metadata of a status update carrying ev. The value
// is a map, not the struct, so that every transport (the gRPC binding's
// structpb conversion among them) carries it unchanged.
func Metadata(ev Event) map[string]any {
	m := map[string]any{"kind": string(ev.Kind)}
	if ev.Model != "" {
		m["model"] = ev.Model
	}
	if ev.UserTier != "" {
		m["user_tier"] = ev.UserTier
	}
	if ev.Error != "" {
		m["error"] = ev.Error
	}
	return map[string]any{URI: m}
}

// EventFrom reads the DevelopmentToolEvent from a status update's metadata.
func EventFrom(meta map[string]any) (Event, bool) {
	raw, ok := meta[URI]
	if !ok {
		return Event{}, false
	}
	if m, ok := raw.(map[string]any); ok {
		// The shape Metadata builds, read without a JSON round trip:
		// the server reads it for every update it records.
		kind, _ := m["kind"].(string)
		model, _ := m["model"].(string)
		tier, _ := m["user_tier"].(string)
		errText, _ := m["error"].(string)
		return Event{Kind: EventKind(kind), Model: model, UserTier: tier, Error: errText}, kind != ""
	}
	var ev Event
	if err := remarshal(raw, &ev); err != nil || ev.Kind == "" {
		return Event{}, false
	}
	return ev, true
}

// Status is a ToolCall's lifecycle state.
type Status string

// The tool call states.
const (
	StatusPending   Status = "PENDING"
	StatusExecuting Status = "EXECUTING"
	StatusSucceeded Status = "SUCCEEDED"
	StatusFailed    Status = "FAILED"
	StatusCancelled Status = "CANCELLED"
)

// ToolCall is a tool's execution, sent whole on every update.
type ToolCall struct {
	ToolCallID          string               `json:"tool_call_id"`
	Status              Status               `json:"status"`
	ToolName            string               `json:"tool_name"`
	Description         string               `json:"description,omitempty"`
	InputParameters     map[string]any       `json:"input_parameters"`
	LiveContent         string               `json:"live_content,omitempty"`
	Output              *ToolOutput          `json:"output,omitempty"`
	Error               *ErrorDetails        `json:"error,omitempty"`
	ConfirmationRequest *ConfirmationRequest `json:"confirmation_request,omitempty"`
}

// ToolOutput is a successful result: exactly one of its fields is set.
type ToolOutput struct {
	Text           *string        `json:"text,omitempty"`
	Diff           *FileDiff      `json:"diff,omitempty"`
	StructuredData map[string]any `json:"structured_data,omitempty"`
}

// ErrorDetails is a failed tool call's error.
type ErrorDetails struct {
	Message    string `json:"message"`
	Type       string `json:"type,omitempty"`
	StatusCode *int   `json:"status_code,omitempty"`
}

// ConfirmationRequest asks the user's permission for a call: the options
// and exactly one kind of details.
type ConfirmationRequest struct {
	Options         []ConfirmationOption `json:"options"`
	ExecuteDetails  *ExecuteDetails      `json:"execute_details,omitempty"`
	FileEditDetails *FileDiff            `json:"file_edit_details,omitempty"`
	McpDetails      *McpDetails          `json:"mcp_details,omitempty"`
	GenericDetails  *GenericDetails      `json:"generic_details,omitempty"`
}

// ConfirmationOption is one choice offered to the user.
type ConfirmationOption struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// The option ids agentry offers; they are gemini-cli's
// ToolConfirmationOutcome values, which gemini-cli's a2a-server takes as
// the answer's outcome.
const (
	OptionProceedOnce   = "proceed_once"
	OptionProceedAlways = "proceed_always"
	// OptionProceedAlwaysAndSave allows the call for the rest of the
	// session and saves a policy rule that allows it in later sessions
	// too (gemini-cli's "… for all future sessions").
	OptionProceedAlwaysAndSave = "proceed_always_and_save"
	OptionCancel               = "cancel"
)

// Option ids agentry accepts but does not offer: gemini-cli's answers
// for an MCP tool's call, allowing the tool, or every tool of its server,
// for the rest of the session.
const (
	OptionProceedAlwaysTool   = "proceed_always_tool"
	OptionProceedAlwaysServer = "proceed_always_server"
)

// ExecuteDetails describe a shell command awaiting approval.
type ExecuteDetails struct {
	Command          string `json:"command"`
	WorkingDirectory string `json:"working_directory,omitempty"`
}

// FileDiff describes a file change.
type FileDiff struct {
	FileName      string  `json:"file_name"`
	FilePath      string  `json:"file_path"`
	OldContent    *string `json:"old_content,omitempty"`
	NewContent    string  `json:"new_content"`
	FormattedDiff string  `json:"formatted_diff,omitempty"`
}

// McpDetails name an MCP tool awaiting approval.
type McpDetails struct {
	ServerName string `json:"server_name"`
	ToolName   string `json:"tool_name"`
}

// GenericDetails describe any other action awaiting approval.
type GenericDetails struct {
	Description string `json:"description"`
}

// AgentThought is a model thought: a subject line and its description.
type AgentThought struct {
	Subject     string `json:"subject"`
	Description string `json:"description"`
}

// ToolCallConfirmation is the client's answer to a ConfirmationRequest.
type ToolCallConfirmation struct {
	ToolCallID       string               `json:"tool_call_id"`
	SelectedOptionID string               `json:"selected_option_id"`
	FileDetails      *ModifiedFileDetails `json:"file_details,omitempty"`
}

// ModifiedFileDetails carry the user's own version of a proposed file.
type ModifiedFileDetails struct {
	NewContent string `json:"new_content"`
}

// AgentSettings configure the agent for a context; the first message of a
// context carries them in its metadata under URI.
type AgentSettings struct {
	WorkspacePath string `json:"workspace_path"`
}

// ParseConfirmation reads a ToolCallConfirmation from a data part's value.
// ok is false when the value is not one (it has no tool_call_id); err
// reports one that is malformed.
func ParseConfirmation(data any) (c ToolCallConfirmation, ok bool, err error) {
	m, isMap := data.(map[string]any)
	if !isMap {
		return c, false, nil
	}
	m = snakeKeys(m)
	if _, has := m["tool_call_id"]; !has {
		return c, false, nil
	}
	if fd, isMap := m["file_details"].(map[string]any); isMap {
		m["file_details"] = snakeKeys(fd)
	}
	if err := remarshal(m, &c); err != nil {
		return c, true, fmt.Errorf("ToolCallConfirmation: %w", err)
	}
	if c.ToolCallID == "" {
		return c, true, fmt.Errorf("ToolCallConfirmation: tool_call_id is empty")
	}
	if c.SelectedOptionID == "" {
		return c, true, fmt.Errorf("ToolCallConfirmation for %s: selected_option_id is missing (want %s, %s or %s)",
			c.ToolCallID, OptionProceedOnce, OptionProceedAlways, OptionCancel)
	}
	return c, true, nil
}

// SettingsFrom reads AgentSettings from a message's metadata: under URI,
// or in gemini-cli's own spelling (coderAgent{kind: agent-settings,
// workspacePath}), which its clients send. ok is false when there are none.
func SettingsFrom(meta map[string]any) (s AgentSettings, ok bool, err error) {
	if raw, has := meta[URI]; has {
		m, isMap := raw.(map[string]any)
		if !isMap {
			return s, true, fmt.Errorf("AgentSettings under %s: want an object, got %T", URI, raw)
		}
		if err := remarshal(snakeKeys(m), &s); err != nil {
			return s, true, fmt.Errorf("AgentSettings: %w", err)
		}
		return s, true, nil
	}
	if raw, has := meta["coderAgent"].(map[string]any); has && raw["kind"] == "agent-settings" {
		p, isString := raw["workspacePath"].(string)
		if !isString {
			return s, true, fmt.Errorf("coderAgent agent-settings: workspacePath must be a string")
		}
		return AgentSettings{WorkspacePath: p}, true, nil
	}
	return s, false, nil
}

// snakeKeys returns m with lowerCamelCase keys also under their snake_case
// names (the snake_case spelling wins when both are present).
func snakeKeys(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if s := snake(k); s != k {
			if _, dup := m[s]; !dup {
				out[s] = v
			}
			continue
		}
		out[k] = v
	}
	return out
}

func snake(k string) string {
	var b strings.Builder
	for i, r := range k {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r + ('a' - 'A'))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// remarshal converts a decoded JSON value into v, rejecting unknown
// fields' wrong types with the field named.
func remarshal(in any, v any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("field %s: want a %s, got a JSON %s", te.Field, te.Type, te.Value)
		}
		return err
	}
	return nil
}
