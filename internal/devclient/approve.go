package devclient

import (
	"maps"
	"slices"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/tools"
)

// ApprovalRequest is what an approver is shown of a call's confirmation
// request: the call, and the command, the file change or the MCP tool
// the request details.
func ApprovalRequest(tc devtool.ToolCall) runtime.ApprovalRequest {
	req := runtime.ApprovalRequest{CallID: tc.ToolCallID, Tool: tc.ToolName, DisplayName: tc.ToolName,
		Description: tc.Description, Kind: tools.KindOther, Args: maps.Clone(tc.InputParameters)}
	if req.Args == nil {
		req.Args = map[string]any{}
	}
	cr := tc.ConfirmationRequest
	if cr != nil && len(cr.Options) > 0 {
		// The terminal offers what the server does: no "always" answer
		// when the server hides them (its security.disableAlwaysAllow, an
		// untrusted workspace), no save answer without its
		// security.enablePermanentToolApproval.
		offers := func(id string) bool {
			return slices.ContainsFunc(cr.Options, func(o devtool.ConfirmationOption) bool { return o.ID == id })
		}
		req.AlwaysHidden = !offers(devtool.OptionProceedAlways) && !offers(devtool.OptionProceedAlwaysAndSave)
		req.SaveHidden = !offers(devtool.OptionProceedAlwaysAndSave)
	}
	switch {
	case cr == nil:
	case cr.McpDetails != nil:
		req.MCP = &runtime.MCPDetails{ServerName: cr.McpDetails.ServerName, ToolName: cr.McpDetails.ToolName}
	case cr.ExecuteDetails != nil:
		req.Kind = tools.KindExecute
		req.Args["command"] = cr.ExecuteDetails.Command
		if d := cr.ExecuteDetails.WorkingDirectory; d != "" {
			req.Args["dir_path"] = d
		}
	case cr.FileEditDetails != nil:
		d := cr.FileEditDetails
		req.Kind = tools.KindEdit
		diff := &tools.FileDiff{Path: d.FilePath, After: d.NewContent}
		if d.OldContent != nil {
			diff.Before = *d.OldContent
		}
		req.Diff = diff
	case cr.GenericDetails != nil:
		if req.Description == "" {
			req.Description = cr.GenericDetails.Description
		}
	}
	return req
}

// Confirmation is the data part of the ToolCallConfirmation that answers
// req with o. args are the arguments an editing approver returned
// (runtime.EditingApprover; nil: none): an edit's modified content goes
// as file_details.new_content.
func Confirmation(req runtime.ApprovalRequest, o runtime.Outcome, args map[string]any) *a2a.Part {
	data := map[string]any{"tool_call_id": req.CallID, "selected_option_id": string(o)}
	if o != runtime.Cancel {
		if content, ok := modifiedContent(req, args); ok {
			data["file_details"] = map[string]any{"new_content": content}
		}
	}
	return a2a.NewDataPart(data)
}

// modifiedContent is the file content the user wrote with "Modify with
// external editor": the terminal's ModifyArgs (runtime.ModifiedArgs) puts
// it into the call's arguments, which the extension's
// file_details.new_content carries instead.
func modifiedContent(req runtime.ApprovalRequest, args map[string]any) (string, bool) {
	if args == nil || req.Diff == nil {
		return "", false
	}
	key := "content"
	if req.Tool == "replace" {
		key = "new_string"
	}
	s, ok := args[key].(string)
	return s, ok
}

// Offered is o as one of the options cr offers: o itself when offered
// (or when cr lists none); an "always" answer the request does not offer
// (proceed_always_tool, proceed_always_server, or proceed_always_and_save
// from a server that saves nothing) becomes proceed_always, or
// proceed_once when that is not offered either; a refusal not offered
// stays cancel, which every server reads.
func Offered(cr *devtool.ConfirmationRequest, o runtime.Outcome) runtime.Outcome {
	if cr == nil || len(cr.Options) == 0 {
		return o
	}
	offered := func(id string) bool {
		return slices.ContainsFunc(cr.Options, func(op devtool.ConfirmationOption) bool { return op.ID == id })
	}
	switch {
	case offered(string(o)):
		return o
	case o == runtime.ProceedAlwaysTool || o == runtime.ProceedAlwaysServer || o == runtime.ProceedAlwaysAndSave:
		if offered(devtool.OptionProceedAlways) {
			return runtime.ProceedAlways
		}
		return runtime.ProceedOnce
	case o == runtime.ProceedAlways:
		return runtime.ProceedOnce
	}
	return o
}
