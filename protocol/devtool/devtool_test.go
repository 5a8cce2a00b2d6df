package devtool_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/protocol/devtool"
)

func TestParseURIAndCompatible(t *testing.T) {
	have := devtool.SemVer{Major: 0, Minor: 1, Patch: 0}
	cases := []struct {
		uri        string
		ours, bad  bool
		compatible bool
	}{
		{uri: devtool.URI, ours: true, compatible: true},
		{uri: strings.Replace(devtool.URI, "/v0/", "/v0.1/", 1), ours: true, compatible: true},
		{uri: strings.Replace(devtool.URI, "/v0/", "/v0.1.0/", 1), ours: true, compatible: true},
		{uri: strings.Replace(devtool.URI, "/v0/", "/v0.1.1/", 1), ours: true, compatible: false}, // a newer patch than ours
		{uri: strings.Replace(devtool.URI, "/v0/", "/v0.2/", 1), ours: true, compatible: false},   // 0.x minors are incompatible
		{uri: strings.Replace(devtool.URI, "/v0/", "/v1/", 1), ours: true, compatible: false},
		{uri: strings.Replace(devtool.URI, "/v0/", "/v01/", 1), ours: true, bad: true},
		{uri: strings.Replace(devtool.URI, "/v0/", "/0/", 1), ours: true, bad: true},
		{uri: strings.Replace(devtool.URI, "/v0/", "/v0.1.2.3/", 1), ours: true, bad: true},
		{uri: "https://example.com/other/v0/spec.md"},
	}
	for _, c := range cases {
		v, parts, ours, err := devtool.ParseURI(c.uri)
		if ours != c.ours || (err != nil) != c.bad {
			t.Errorf("%s: ours %v err %v", c.uri, ours, err)
			continue
		}
		if ours && !c.bad {
			if got := devtool.Compatible(v, parts, have); got != c.compatible {
				t.Errorf("%s: compatible %v, want %v", c.uri, got, c.compatible)
			}
		}
	}
	// Above 1.0, an older minor is compatible, a newer one is not.
	v1 := devtool.SemVer{Major: 1, Minor: 2}
	for _, c := range []struct {
		want devtool.SemVer
		ok   bool
	}{{devtool.SemVer{Major: 1, Minor: 1}, true}, {devtool.SemVer{Major: 1, Minor: 3}, false}, {devtool.SemVer{Major: 1, Minor: 2, Patch: 1}, false}} {
		if got := devtool.Compatible(c.want, 3, v1); got != c.ok {
			t.Errorf("%v against %v: %v", c.want, v1, got)
		}
	}
}

func TestParseConfirmation(t *testing.T) {
	cases := []struct {
		in       any
		ok, bad  bool
		option   string
		modified string
	}{
		{in: map[string]any{"tool_call_id": "c1", "selected_option_id": "proceed_once"}, ok: true, option: "proceed_once"},
		{in: map[string]any{"toolCallId": "c1", "selectedOptionId": "cancel"}, ok: true, option: "cancel"},
		{in: map[string]any{"tool_call_id": "c1", "selected_option_id": "proceed_once", "file_details": map[string]any{"newContent": "x"}}, ok: true, option: "proceed_once", modified: "x"},
		{in: map[string]any{"tool_call_id": "c1"}, ok: true, bad: true},
		{in: map[string]any{"tool_call_id": 5, "selected_option_id": "cancel"}, ok: true, bad: true},
		{in: map[string]any{"other": 1}},
		{in: "text"},
	}
	for i, c := range cases {
		got, ok, err := devtool.ParseConfirmation(c.in)
		if ok != c.ok || (err != nil) != c.bad {
			t.Errorf("%d: ok %v err %v", i, ok, err)
			continue
		}
		if ok && !c.bad {
			if got.SelectedOptionID != c.option || (c.modified != "" && (got.FileDetails == nil || got.FileDetails.NewContent != c.modified)) {
				t.Errorf("%d: %+v", i, got)
			}
		}
	}
}

func TestSettingsFrom(t *testing.T) {
	s, ok, err := devtool.SettingsFrom(map[string]any{devtool.URI: map[string]any{"workspace_path": "/w", "isTrusted": true}})
	if !ok || err != nil || s.WorkspacePath != "/w" {
		t.Fatalf("%+v %v %v", s, ok, err)
	}
	s, ok, err = devtool.SettingsFrom(map[string]any{"coderAgent": map[string]any{"kind": "agent-settings", "workspacePath": "/g"}})
	if !ok || err != nil || s.WorkspacePath != "/g" {
		t.Fatalf("gemini-cli spelling: %+v %v %v", s, ok, err)
	}
	if _, ok, err := devtool.SettingsFrom(map[string]any{devtool.URI: "nope"}); !ok || err == nil {
		t.Fatalf("malformed settings: %v %v", ok, err)
	}
	if _, ok, _ := devtool.SettingsFrom(nil); ok {
		t.Fatal("no settings")
	}
}

// TestToolCallMapIsItsJSON: the map a ToolCall's data part carries is
// the struct's JSON encoding, for every kind of result and details.
func TestToolCallMapIsItsJSON(t *testing.T) {
	text, old, code := "out", "before", 3
	calls := []devtool.ToolCall{
		{ToolCallID: "a", Status: devtool.StatusPending, ToolName: "write_file", Description: "Writing", InputParameters: map[string]any{"n": 1.0},
			ConfirmationRequest: &devtool.ConfirmationRequest{Options: []devtool.ConfirmationOption{{ID: "proceed_once", Name: "Allow once"}, {ID: "cancel", Name: "Reject", Description: "no"}},
				FileEditDetails: &devtool.FileDiff{FileName: "f", FilePath: "/w/f", OldContent: &old, NewContent: "after", FormattedDiff: "--- f"}}},
		{ToolCallID: "b", Status: devtool.StatusPending, ToolName: "run_shell_command", ConfirmationRequest: &devtool.ConfirmationRequest{
			Options: []devtool.ConfirmationOption{}, ExecuteDetails: &devtool.ExecuteDetails{Command: "ls", WorkingDirectory: "/w"}}},
		{ToolCallID: "c", Status: devtool.StatusPending, ToolName: "mcp", ConfirmationRequest: &devtool.ConfirmationRequest{
			Options: []devtool.ConfirmationOption{}, McpDetails: &devtool.McpDetails{ServerName: "s", ToolName: "t"}}},
		{ToolCallID: "d", Status: devtool.StatusPending, ToolName: "x", ConfirmationRequest: &devtool.ConfirmationRequest{
			Options: []devtool.ConfirmationOption{}, GenericDetails: &devtool.GenericDetails{Description: "d"}}},
		{ToolCallID: "e", Status: devtool.StatusExecuting, ToolName: "run_shell_command", LiveContent: "partial"},
		{ToolCallID: "f", Status: devtool.StatusSucceeded, ToolName: "read_file", Output: &devtool.ToolOutput{Text: &text}},
		{ToolCallID: "g", Status: devtool.StatusSucceeded, ToolName: "replace", Output: &devtool.ToolOutput{Diff: &devtool.FileDiff{FileName: "f", FilePath: "/w/f", NewContent: "n"}}},
		{ToolCallID: "h", Status: devtool.StatusSucceeded, ToolName: "mcp", Output: &devtool.ToolOutput{StructuredData: map[string]any{"k": "v"}}},
		{ToolCallID: "i", Status: devtool.StatusFailed, ToolName: "grep", Error: &devtool.ErrorDetails{Message: "boom", Type: "grep_execution_error", StatusCode: &code}},
	}
	for _, tc := range calls {
		if tc.InputParameters == nil {
			tc.InputParameters = map[string]any{} // Map sends {} for none, as a proto Struct
		}
		b, err := json.Marshal(tc)
		if err != nil {
			t.Fatal(err)
		}
		var want map[string]any
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		mb, _ := json.Marshal(tc.Map())
		var got map[string]any
		_ = json.Unmarshal(mb, &got)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n map %s\njson %s", tc.ToolCallID, mb, b)
		}
	}
}

func TestSupports(t *testing.T) {
	for _, c := range []struct {
		uri            string
		ours, incompat bool
		malformed      bool
	}{
		{uri: devtool.URI, ours: true},
		{uri: strings.Replace(devtool.URI, "/v0/", "/v1/", 1), ours: true, incompat: true},
		{uri: strings.Replace(devtool.URI, "/v0/", "/vx/", 1), ours: true, malformed: true},
		{uri: "https://example.com/ext"},
	} {
		ours, err := devtool.Supports(c.uri)
		if ours != c.ours || errors.Is(err, devtool.ErrIncompatible) != c.incompat || (err != nil && !c.incompat) != c.malformed {
			t.Errorf("%s: ours %v, err %v", c.uri, ours, err)
		}
	}
}
