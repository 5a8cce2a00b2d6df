package protocol

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/tools"
)

// TestToolCallTransitions: every path of a call through the extension's
// lifecycle. Each call gets exactly one PENDING, then EXECUTING (with
// live output) and one of SUCCEEDED, FAILED or CANCELLED.
func TestToolCallTransitions(t *testing.T) {
	req := runtime.Event{Type: runtime.EventToolRequest, ToolRequest: &runtime.ToolRequest{RequestID: "c", Name: "run_shell_command", Args: map[string]any{"command": "ls"}}}
	ok := runtime.Event{Type: runtime.EventToolResponse, ToolResponse: &runtime.ToolResponse{RequestID: "c", Name: "run_shell_command", Content: []runtime.ContentPart{runtime.TextPart("a b")}}}
	failed := runtime.Event{Type: runtime.EventToolResponse, ToolResponse: &runtime.ToolResponse{RequestID: "c", IsError: true,
		Content: []runtime.ContentPart{runtime.TextPart("exit 1")}, Data: map[string]any{"errorType": "execution_failed"}}}
	aborted := runtime.Event{Type: runtime.EventToolResponse, ToolResponse: &runtime.ToolResponse{RequestID: "c", IsError: true,
		Content: []runtime.ContentPart{runtime.TextPart("aborted")}, Data: map[string]any{"errorType": string(tools.ErrCancelled)}}}
	denied := runtime.Event{Type: runtime.EventToolResponse, ToolResponse: &runtime.ToolResponse{RequestID: "c", IsError: true,
		Content: []runtime.ContentPart{runtime.TextPart("User denied execution.")}, Data: map[string]any{"errorType": "policy_violation"}}}
	output := runtime.Event{Type: runtime.EventToolUpdate, ToolUpdate: &runtime.ToolUpdate{RequestID: "c", Content: []runtime.ContentPart{runtime.TextPart("a ")}}}
	ask := runtime.ApprovalRequest{CallID: "c", Tool: "run_shell_command", Kind: tools.KindExecute, Args: map[string]any{"command": "ls"}}

	type step struct {
		ev       *runtime.Event
		ask      bool
		run      bool
		userDeny bool
	}
	cases := []struct {
		name  string
		steps []step
		want  string
	}{
		{"allowed, succeeds", []step{{ev: &req}, {run: true}, {ev: &output}, {ev: &ok}}, "PENDING EXECUTING EXECUTING(live) SUCCEEDED"},
		{"allowed, fails", []step{{ev: &req}, {run: true}, {ev: &failed}}, "PENDING EXECUTING FAILED"},
		{"allowed, aborted while running", []step{{ev: &req}, {run: true}, {ev: &aborted}}, "PENDING EXECUTING CANCELLED"},
		{"denied by policy, never runs", []step{{ev: &req}, {ev: &failed}}, "PENDING FAILED"},
		{"asks, approved, succeeds", []step{{ev: &req}, {ask: true}, {run: true}, {ev: &ok}}, "PENDING(confirm) EXECUTING SUCCEEDED"},
		{"asks, user cancels", []step{{ev: &req}, {ask: true}, {userDeny: true}, {ev: &denied}}, "PENDING(confirm) CANCELLED"},
		{"asks, aborted while waiting", []step{{ev: &req}, {ask: true}, {ev: &aborted}}, "PENDING(confirm) CANCELLED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := newTranslator(a2a.TaskInfo{TaskID: "t", ContextID: "x"}, "m", time.Now)
			var evs []a2a.Event
			for _, s := range c.steps {
				switch {
				case s.ev != nil:
					evs = append(evs, tr.event(*s.ev)...)
				case s.ask:
					evs = append(evs, tr.confirmation(ask, "/w")...)
				case s.run:
					evs = append(evs, tr.executing("c")...)
				case s.userDeny:
					tr.denied["c"] = true
				}
			}
			var got []string
			for _, ev := range evs {
				u := ev.(*a2a.TaskStatusUpdateEvent)
				if dev, _ := devtool.EventFrom(u.Metadata); dev.Kind != devtool.KindToolCallUpdate {
					t.Fatalf("kind %s", dev.Kind)
				}
				tc, err := devtool.ToolCallFrom(u.Status.Message.Parts[0].Data())
				if err != nil {
					t.Fatal(err)
				}
				s := string(tc.Status)
				if tc.ConfirmationRequest != nil {
					s += "(confirm)"
				}
				if tc.LiveContent != "" {
					s += "(live)"
				}
				got = append(got, s)
			}
			if strings.Join(got, " ") != c.want {
				t.Fatalf("got %s, want %s", strings.Join(got, " "), c.want)
			}
		})
	}
}

// TestStoredHistoryMergesDeltas: the task handed to the store, and a live
// task's snapshot, hold each run of text deltas as one message; other
// messages (the user's, a thought, a state change's text) stay as they
// were; historyLength counts merged messages.
func TestStoredHistoryMergesDeltas(t *testing.T) {
	info := a2a.TaskInfo{TaskID: "t", ContextID: "c"}
	tr := newTranslator(info, "m", time.Now)
	user := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))
	lt := &liveTask{task: &a2a.Task{ID: info.TaskID, ContextID: info.ContextID, History: []*a2a.Message{user}}}
	var stored *a2a.Task
	for _, ev := range []a2a.Event{
		tr.stateChange(a2a.TaskStateWorking, "", ""),
		tr.text("One "), tr.text("two "), tr.text("three."),
		tr.thought("**Plan** next"),
		tr.text("Four "), tr.text("five."),
		tr.stateChange(a2a.TaskStateWorking, "status text", ""),
		tr.text("Six."),
		tr.stateChange(a2a.TaskStateCompleted, "", ""),
	} {
		if _, s := lt.apply(ev); s != nil {
			stored = s
		}
	}
	var got []string
	for _, m := range stored.History {
		got = append(got, describeMessage(m))
	}
	want := "user:hi | agent:One two three. | agent:data | agent:Four five. | agent:status text | agent:Six."
	if strings.Join(got, " | ") != want {
		t.Errorf("stored history:\n got %s\nwant %s", strings.Join(got, " | "), want)
	}
	if n := len(lt.task.History); n != 9 {
		t.Errorf("live history has %d messages, want every one (9)", n)
	}
	var snap []string
	for _, m := range lt.snapshot(nil).History {
		snap = append(snap, describeMessage(m))
	}
	if strings.Join(snap, " | ") != want {
		t.Errorf("snapshot history:\n got %s\nwant %s", strings.Join(snap, " | "), want)
	}
	two := 2
	if h := lt.snapshot(&two).History; len(h) != 2 || describeMessage(h[0]) != "agent:status text" {
		t.Errorf("snapshot with historyLength 2: %d messages, first %s", len(h), describeMessage(h[0]))
	}
	if stored.History[1].ID != lt.task.History[1].ID {
		t.Errorf("merged message id %s, want the first delta's %s", stored.History[1].ID, lt.task.History[1].ID)
	}
}

func describeMessage(m *a2a.Message) string {
	var parts []string
	for _, p := range m.Parts {
		if s, ok := p.Content.(a2a.Text); ok {
			parts = append(parts, string(s))
		} else {
			parts = append(parts, "data")
		}
	}
	return strings.ToLower(string(m.Role)[len("ROLE_"):]) + ":" + strings.Join(parts, "+")
}

// TestStructuredOutput: an MCP tool's structured result reaches the
// client as the ToolCall's structured_data; a result without one, or
// whose structured content is not an object, stays text.
func TestStructuredOutput(t *testing.T) {
	type weather struct {
		City  string  `json:"city"`
		TempC float64 `json:"temp_c"`
	}
	for _, c := range []struct {
		name       string
		structured any
		want       map[string]any
	}{
		{"object", map[string]any{"city": "Oslo", "temp_c": -3.5}, map[string]any{"city": "Oslo", "temp_c": -3.5}},
		{"Go value", weather{"Oslo", -3.5}, map[string]any{"city": "Oslo", "temp_c": -3.5}},
		{"not an object", []any{1, 2}, nil},
		{"none", nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := newTranslator(a2a.TaskInfo{TaskID: "t", ContextID: "x"}, "m", time.Now)
			tr.event(runtime.Event{Type: runtime.EventToolRequest, ToolRequest: &runtime.ToolRequest{RequestID: "c", Name: "mcp_weather_get", Args: map[string]any{}}})
			data := map[string]any{"server": "weather", "tool": "get"}
			if c.structured != nil {
				data["structuredContent"] = c.structured
			}
			evs := tr.event(runtime.Event{Type: runtime.EventToolResponse, ToolResponse: &runtime.ToolResponse{
				RequestID: "c", Name: "mcp_weather_get", Content: []runtime.ContentPart{runtime.TextPart(`{"city":"Oslo","temp_c":-3.5}`)}, Data: data}})
			tc, err := devtool.ToolCallFrom(evs[len(evs)-1].(*a2a.TaskStatusUpdateEvent).Status.Message.Parts[0].Data())
			if err != nil {
				t.Fatal(err)
			}
			if tc.Status != devtool.StatusSucceeded || tc.Output == nil {
				t.Fatalf("tool call %+v", tc)
			}
			if c.want == nil {
				if tc.Output.StructuredData != nil || tc.Output.Text == nil || *tc.Output.Text == "" {
					t.Errorf("output %+v, want the text", tc.Output)
				}
				return
			}
			if !reflect.DeepEqual(tc.Output.StructuredData, c.want) || tc.Output.Text != nil {
				t.Errorf("output %+v, want structured_data %v", tc.Output, c.want)
			}
		})
	}
}
