package devtool

// Map returns the ToolCall as the JSON object its DataPart carries. It is
// built directly rather than through encoding/json: a running task sends
// the whole call on every update, and A2A's gRPC binding and task copies
// need plain maps, not Go structs. A test holds it equal to the JSON
// encoding.
func (tc *ToolCall) Map() map[string]any {
	m := map[string]any{
		"tool_call_id":     tc.ToolCallID,
		"status":           string(tc.Status),
		"tool_name":        tc.ToolName,
		"input_parameters": orEmpty(tc.InputParameters),
	}
	if tc.Description != "" {
		m["description"] = tc.Description
	}
	if tc.LiveContent != "" {
		m["live_content"] = tc.LiveContent
	}
	if o := tc.Output; o != nil {
		out := map[string]any{}
		switch {
		case o.Text != nil:
			out["text"] = *o.Text
		case o.Diff != nil:
			out["diff"] = o.Diff.Map()
		case o.StructuredData != nil:
			out["structured_data"] = o.StructuredData
		}
		m["output"] = out
	}
	if e := tc.Error; e != nil {
		em := map[string]any{"message": e.Message}
		if e.Type != "" {
			em["type"] = e.Type
		}
		if e.StatusCode != nil {
			em["status_code"] = float64(*e.StatusCode)
		}
		m["error"] = em
	}
	if cr := tc.ConfirmationRequest; cr != nil {
		opts := make([]any, len(cr.Options))
		for i, o := range cr.Options {
			om := map[string]any{"id": o.ID, "name": o.Name}
			if o.Description != "" {
				om["description"] = o.Description
			}
			opts[i] = om
		}
		c := map[string]any{"options": opts}
		switch {
		case cr.ExecuteDetails != nil:
			d := map[string]any{"command": cr.ExecuteDetails.Command}
			if cr.ExecuteDetails.WorkingDirectory != "" {
				d["working_directory"] = cr.ExecuteDetails.WorkingDirectory
			}
			c["execute_details"] = d
		case cr.FileEditDetails != nil:
			c["file_edit_details"] = cr.FileEditDetails.Map()
		case cr.McpDetails != nil:
			c["mcp_details"] = map[string]any{"server_name": cr.McpDetails.ServerName, "tool_name": cr.McpDetails.ToolName}
		case cr.GenericDetails != nil:
			c["generic_details"] = map[string]any{"description": cr.GenericDetails.Description}
		}
		m["confirmation_request"] = c
	}
	return m
}

// Map returns the FileDiff as a JSON object.
func (d *FileDiff) Map() map[string]any {
	m := map[string]any{"file_name": d.FileName, "file_path": d.FilePath, "new_content": d.NewContent}
	if d.OldContent != nil {
		m["old_content"] = *d.OldContent
	}
	if d.FormattedDiff != "" {
		m["formatted_diff"] = d.FormattedDiff
	}
	return m
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// ToolCallFrom reads a ToolCall from a data part's value.
func ToolCallFrom(data any) (ToolCall, error) {
	var tc ToolCall
	err := remarshal(data, &tc)
	return tc, err
}

// ThoughtFrom reads an AgentThought from a data part's value.
func ThoughtFrom(data any) (AgentThought, error) {
	var th AgentThought
	err := remarshal(data, &th)
	return th, err
}
