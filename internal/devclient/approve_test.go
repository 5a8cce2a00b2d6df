package devclient

import (
	"testing"

	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/runtime"
)

func TestApprovalRequestShapes(t *testing.T) {
	mcp := ApprovalRequest(devtool.ToolCall{ToolCallID: "c", ToolName: "srv__get", ConfirmationRequest: &devtool.ConfirmationRequest{
		McpDetails: &devtool.McpDetails{ServerName: "srv", ToolName: "get"}}})
	if mcp.MCP == nil || mcp.MCP.ServerName != "srv" || mcp.MCP.ToolName != "get" {
		t.Errorf("mcp %+v", mcp)
	}
	exec := ApprovalRequest(devtool.ToolCall{ToolCallID: "c", ToolName: "run_shell_command", ConfirmationRequest: &devtool.ConfirmationRequest{
		ExecuteDetails: &devtool.ExecuteDetails{Command: "make", WorkingDirectory: "/ws/sub"}}})
	if exec.Kind != "execute" || exec.Args["command"] != "make" || exec.Args["dir_path"] != "/ws/sub" {
		t.Errorf("exec %+v", exec)
	}
	// A server that offers no "always" answer: the terminal hides its own.
	for _, tc := range []struct {
		ids    []string
		hidden bool
	}{
		{[]string{devtool.OptionProceedOnce, devtool.OptionCancel}, true},
		{[]string{devtool.OptionProceedOnce, devtool.OptionProceedAlways, devtool.OptionCancel}, false},
		{nil, false},
	} {
		cr := &devtool.ConfirmationRequest{ExecuteDetails: &devtool.ExecuteDetails{Command: "make"}}
		for _, id := range tc.ids {
			cr.Options = append(cr.Options, devtool.ConfirmationOption{ID: id})
		}
		if got := ApprovalRequest(devtool.ToolCall{ToolCallID: "c", ConfirmationRequest: cr}); got.AlwaysHidden != tc.hidden {
			t.Errorf("options %v: AlwaysHidden = %v", tc.ids, got.AlwaysHidden)
		}
	}
	generic := ApprovalRequest(devtool.ToolCall{ToolCallID: "c", ToolName: "web_fetch", ConfirmationRequest: &devtool.ConfirmationRequest{
		GenericDetails: &devtool.GenericDetails{Description: "fetch example.com"}}})
	if generic.Description != "fetch example.com" || generic.Kind != "other" {
		t.Errorf("generic %+v", generic)
	}
}

// A confirmation reads back as the extension's ToolCallConfirmation: the
// option, and an edit's modified content unless the call is refused.
func TestConfirmation(t *testing.T) {
	write := ApprovalRequest(devtool.ToolCall{ToolCallID: "w1", ToolName: "write_file",
		InputParameters:     map[string]any{"file_path": "a.txt", "content": "old\n"},
		ConfirmationRequest: &devtool.ConfirmationRequest{FileEditDetails: &devtool.FileDiff{FilePath: "/ws/a.txt", NewContent: "old\n"}}})
	edited, err := runtime.ModifiedArgs(write, "mine\n")
	if err != nil {
		t.Fatal(err)
	}
	replace := write
	replace.Tool = "replace"
	replaced, err := runtime.ModifiedArgs(replace, "whole\n")
	if err != nil {
		t.Fatal(err)
	}
	shell := ApprovalRequest(devtool.ToolCall{ToolCallID: "s1", ToolName: "run_shell_command",
		ConfirmationRequest: &devtool.ConfirmationRequest{ExecuteDetails: &devtool.ExecuteDetails{Command: "ls"}}})
	for _, c := range []struct {
		name    string
		req     runtime.ApprovalRequest
		o       runtime.Outcome
		args    map[string]any
		want    devtool.ToolCallConfirmation
		content string
	}{
		{"shell once", shell, runtime.ProceedOnce, nil, devtool.ToolCallConfirmation{ToolCallID: "s1", SelectedOptionID: "proceed_once"}, ""},
		{"shell refused", shell, runtime.Cancel, nil, devtool.ToolCallConfirmation{ToolCallID: "s1", SelectedOptionID: "cancel"}, ""},
		{"edit as proposed", write, runtime.ProceedAlways, nil, devtool.ToolCallConfirmation{ToolCallID: "w1", SelectedOptionID: "proceed_always"}, ""},
		{"edit modified", write, runtime.ProceedOnce, edited, devtool.ToolCallConfirmation{ToolCallID: "w1", SelectedOptionID: "proceed_once"}, "mine\n"},
		{"replace modified", replace, runtime.ProceedOnce, replaced, devtool.ToolCallConfirmation{ToolCallID: "w1", SelectedOptionID: "proceed_once"}, "whole\n"},
		{"modified but refused", write, runtime.Cancel, edited, devtool.ToolCallConfirmation{ToolCallID: "w1", SelectedOptionID: "cancel"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok, err := devtool.ParseConfirmation(Confirmation(c.req, c.o, c.args).Data())
			if !ok || err != nil {
				t.Fatalf("not a confirmation: %v", err)
			}
			content := ""
			if got.FileDetails != nil {
				content = got.FileDetails.NewContent
			}
			if got.ToolCallID != c.want.ToolCallID || got.SelectedOptionID != c.want.SelectedOptionID || content != c.content {
				t.Errorf("got %+v (content %q), want %+v (content %q)", got, content, c.want, c.content)
			}
		})
	}
}

func TestOffered(t *testing.T) {
	all := &devtool.ConfirmationRequest{Options: []devtool.ConfirmationOption{
		{ID: devtool.OptionProceedOnce}, {ID: devtool.OptionProceedAlways}, {ID: devtool.OptionCancel}}}
	onceOnly := &devtool.ConfirmationRequest{Options: []devtool.ConfirmationOption{{ID: devtool.OptionProceedOnce}, {ID: devtool.OptionCancel}}}
	withSave := &devtool.ConfirmationRequest{Options: []devtool.ConfirmationOption{
		{ID: devtool.OptionProceedOnce}, {ID: devtool.OptionProceedAlways}, {ID: devtool.OptionProceedAlwaysAndSave}, {ID: devtool.OptionCancel}}}
	mcp := &devtool.ConfirmationRequest{Options: []devtool.ConfirmationOption{
		{ID: devtool.OptionProceedOnce}, {ID: devtool.OptionProceedAlwaysServer}, {ID: devtool.OptionCancel}}}
	for _, c := range []struct {
		cr   *devtool.ConfirmationRequest
		o    runtime.Outcome
		want runtime.Outcome
	}{
		{all, runtime.ProceedOnce, runtime.ProceedOnce},
		{all, runtime.ProceedAlways, runtime.ProceedAlways},
		{all, runtime.ProceedAlwaysTool, runtime.ProceedAlways},
		{all, runtime.ProceedAlwaysServer, runtime.ProceedAlways},
		{all, runtime.Cancel, runtime.Cancel},
		// A server that saves no rules (an older agentry, gemini-cli's
		// a2a-server) gets proceed_always for "always and save".
		{all, runtime.ProceedAlwaysAndSave, runtime.ProceedAlways},
		{withSave, runtime.ProceedAlwaysAndSave, runtime.ProceedAlwaysAndSave},
		{onceOnly, runtime.ProceedAlwaysAndSave, runtime.ProceedOnce},
		{onceOnly, runtime.ProceedAlways, runtime.ProceedOnce},
		{onceOnly, runtime.ProceedAlwaysServer, runtime.ProceedOnce},
		{mcp, runtime.ProceedAlwaysServer, runtime.ProceedAlwaysServer},
		{mcp, runtime.ProceedAlways, runtime.ProceedOnce},
		{nil, runtime.ProceedAlwaysTool, runtime.ProceedAlwaysTool},
		{&devtool.ConfirmationRequest{}, runtime.ProceedAlways, runtime.ProceedAlways},
	} {
		if got := Offered(c.cr, c.o); got != c.want {
			var ids []string
			if c.cr != nil {
				for _, op := range c.cr.Options {
					ids = append(ids, op.ID)
				}
			}
			t.Errorf("Offered(%v, %s) = %s, want %s", ids, c.o, got, c.want)
		}
	}
}
