package protocol_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/protocol"
	"github.com/agentry-dev/agentry/protocol/devtool"
)

// TestConfirmationOffers: a confirmation offers the "always" answers only
// in a trusted workspace, and the save answer only with
// security.enablePermanentToolApproval, as gemini-cli's dialog; an
// answer that was not offered is refused and the task stays parked.
func TestConfirmationOffers(t *testing.T) {
	tests := []struct {
		name      string
		trusted   bool
		permanent bool
		want      []string
		refused   string // an option the server must refuse
	}{
		{"untrusted", false, true, []string{devtool.OptionProceedOnce, devtool.OptionCancel}, devtool.OptionProceedAlways},
		{"trusted", true, false, []string{devtool.OptionProceedOnce, devtool.OptionProceedAlways, devtool.OptionCancel}, devtool.OptionProceedAlwaysAndSave},
		{"trusted with permanent approval", true, true,
			[]string{devtool.OptionProceedOnce, devtool.OptionProceedAlways, devtool.OptionProceedAlwaysAndSave, devtool.OptionCancel}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, []string{
				callTurn("", "write_file", map[string]any{"file_path": "a.txt", "content": "x"}),
				textTurn("ok"),
			}, func(_ *protocol.Config, s *config.Settings) {
				s.Trusted = tc.trusted
				s.Security.EnablePermanentToolApproval = tc.permanent
			})
			first := collect(t, h.client("jsonrpc"), userMessage("write a.txt", ""))
			task := first[0].(*a2a.Task)
			tc0 := toolCallOf(first[len(first)-2].(*a2a.TaskStatusUpdateEvent))
			var got []string
			for _, o := range tc0.ConfirmationRequest.Options {
				got = append(got, o.ID)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("options %q, want %q", got, tc.want)
			}
			if tc.refused == "" {
				return
			}
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"c1","role":"ROLE_USER","taskId":%q,"contextId":%q,"parts":[{"data":{"tool_call_id":%q,"selected_option_id":%q}}]}}}`,
				task.ID, task.ContextID, tc0.ToolCallID, tc.refused)
			_, resp := h.raw("POST", "/", body, nil)
			if code, msg := rpcError(resp); code != -32602 || !strings.Contains(msg, "is not an option") {
				t.Fatalf("answer %s: %s, want it refused", tc.refused, resp)
			}
			second := collect(t, h.client("jsonrpc"), confirm(task, tc0.ToolCallID, devtool.OptionProceedOnce))
			if got := describe(second); !strings.HasSuffix(got, "STATE_CHANGE:completed") {
				t.Fatalf("after the refused answer, proceed_once gave %s", got)
			}
		})
	}
}
