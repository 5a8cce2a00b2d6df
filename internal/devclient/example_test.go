package devclient_test

import (
	"encoding/json"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/internal/devclient"
	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/runtime"
)

// A client follows a task's updates, asks about a call that waits for
// confirmation and sends the answer back.
func Example() {
	tr := devclient.NewTranslator()
	tc := devtool.ToolCall{ToolCallID: "c1", Status: devtool.StatusPending, ToolName: "run_shell_command",
		InputParameters: map[string]any{"command": "make test"},
		ConfirmationRequest: &devtool.ConfirmationRequest{
			Options:        []devtool.ConfirmationOption{{ID: devtool.OptionProceedOnce}, {ID: devtool.OptionProceedAlways}, {ID: devtool.OptionCancel}},
			ExecuteDetails: &devtool.ExecuteDetails{Command: "make test", WorkingDirectory: "/ws"},
		}}
	update := &a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "ctx1",
		Status:   a2a.TaskStatus{State: a2a.TaskStateWorking, Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewDataPart(tc.Map()))},
		Metadata: devtool.Metadata(devtool.Event{Kind: devtool.KindToolCallUpdate})}
	step := tr.Event(update)
	for _, ev := range step.Events {
		fmt.Println(ev.Type, ev.ToolRequest.Name)
	}
	req := devclient.ApprovalRequest(*step.Confirm)
	fmt.Println(req.Kind, req.Args["command"], req.Args["dir_path"])
	// The human allowed the MCP-style "this tool always"; the server
	// offers proceed_always.
	o := devclient.Offered(step.Confirm.ConfirmationRequest, runtime.ProceedAlwaysTool)
	b, _ := json.Marshal(devclient.Confirmation(req, o, nil).Data())
	fmt.Println(string(b))
	// Output:
	// tool_request run_shell_command
	// execute make test /ws
	// {"selected_option_id":"proceed_always","tool_call_id":"c1"}
}
