package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/masking"
	"github.com/agentry-dev/agentry/tools"
)

// bigOutput is 100,000 characters whose head, middle and tail differ.
func bigOutput() string {
	return strings.Repeat("h", 10_000) + strings.Repeat("m", 60_000) + strings.Repeat("t", 30_000)
}

// optIn is a fake tool that asks for truncation, as MCP tools will.
type optIn struct{ *fakeTool }

func (optIn) TruncatesOutput() bool { return true }

// runOneCall runs a session whose model calls tool once and returns the
// stream's events and the function response the model got back.
func runOneCall(t *testing.T, tool tools.Tool, cfg Config) ([]Event, map[string]any) {
	t.Helper()
	b := newScript(callTurn("", fc("call-1", tool.Name(), map[string]any{"command": "big"})), textTurn("done"))
	cfg.Tools = []tools.Tool{tool}
	cfg.Policy = mustPolicy(t, "yolo")
	if cfg.SessionID == "" {
		cfg.SessionID = "sess-1"
	}
	s := newTestSession(t, b, cfg)
	evs := run(t, s, "go")
	reqs := b.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2; events %v", len(reqs), types(evs))
	}
	frs := functionResponses(reqs[1])
	if len(frs) != 1 {
		t.Fatalf("function responses %+v", frs)
	}
	return evs, frs[0].Response
}

func TestShellOutputIsTruncated(t *testing.T) {
	full := bigOutput()
	shell := &fakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute, Run: func(context.Context, tools.Call) (tools.Result, error) {
		return tools.Result{LLMContent: full, Display: "Command completed", Data: map[string]any{"exitCode": 0}}, nil
	}}
	temp := t.TempDir()
	evs, resp := runOneCall(t, shell, Config{TempDir: temp})

	path := filepath.Join(temp, "tool-outputs", "session-sess-1", "run_shell_command_call-1.txt")
	want := "Output too large. Showing first 8,000 and last 32,000 characters. For full output see: " + path + "\n" +
		strings.Repeat("h", 8_000) + "\n\n... [60,000 characters omitted] ...\n\n" + strings.Repeat("m", 2_000) + strings.Repeat("t", 30_000)
	if got := resp["output"]; got != want {
		t.Errorf("the model got %d characters, not gemini-cli's truncation", len(fmt.Sprint(got)))
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != full {
		t.Fatalf("spill file: %d bytes, %v", len(data), err)
	}

	// The tool_response shows what the model got, names the full output's
	// file, and keeps the tool's own display and data.
	tr := find(evs, EventToolResponse)[0].ToolResponse
	if tr.IsError || tr.Content[0].Text != want {
		t.Errorf("tool_response content is not the truncated output")
	}
	if tr.Data["outputFile"] != path || tr.Data["exitCode"] != 0 || tr.Display.Result.Text != "Command completed" {
		t.Errorf("tool_response data %v, display %+v", tr.Data, tr.Display.Result)
	}
}

func TestTruncationThresholdAndScope(t *testing.T) {
	full := bigOutput()
	result := func(context.Context, tools.Call) (tools.Result, error) { return tools.Result{LLMContent: full}, nil }

	t.Run("other tools are not truncated", func(t *testing.T) {
		_, resp := runOneCall(t, &fakeTool{ToolName: "read_file", ToolKind: tools.KindRead, Run: result}, Config{TempDir: t.TempDir()})
		if resp["output"] != full {
			t.Error("read_file output was truncated")
		}
	})
	t.Run("tools can opt in", func(t *testing.T) {
		temp := t.TempDir()
		evs, resp := runOneCall(t, optIn{&fakeTool{ToolName: "mcp_tool", ToolKind: tools.KindOther, Run: result}}, Config{TempDir: temp})
		path := filepath.Join(temp, "tool-outputs", "session-sess-1", "mcp_tool_call-1.txt")
		if resp["output"] != masking.FormatTruncated(full, path, 40_000) {
			t.Error("opted-in tool not truncated")
		}
		if find(evs, EventToolResponse)[0].ToolResponse.Data["outputFile"] != path {
			t.Error("no outputFile")
		}
	})
	t.Run("a custom threshold", func(t *testing.T) {
		temp := t.TempDir()
		_, resp := runOneCall(t, &fakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute, Run: result}, Config{TempDir: temp, TruncateThreshold: 1000})
		path := filepath.Join(temp, "tool-outputs", "session-sess-1", "run_shell_command_call-1.txt")
		if resp["output"] != masking.FormatTruncated(full, path, 1000) {
			t.Errorf("output %.80q…", resp["output"])
		}
	})
	t.Run("a negative threshold turns truncation off", func(t *testing.T) {
		temp := t.TempDir()
		_, resp := runOneCall(t, &fakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute, Run: result}, Config{TempDir: temp, TruncateThreshold: -1})
		if resp["output"] != full {
			t.Error("truncated anyway")
		}
		if _, err := os.Stat(filepath.Join(temp, "tool-outputs")); !os.IsNotExist(err) {
			t.Error("spilled anyway")
		}
	})
	t.Run("output at the threshold is kept", func(t *testing.T) {
		exact := strings.Repeat("é", 40_000) // 80,000 bytes, 40,000 characters
		_, resp := runOneCall(t, &fakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute, Run: func(context.Context, tools.Call) (tools.Result, error) {
			return tools.Result{LLMContent: exact}, nil
		}}, Config{TempDir: t.TempDir()})
		if resp["output"] != exact {
			t.Error("40,000 characters were truncated")
		}
	})
	t.Run("without a temp dir, a private one", func(t *testing.T) {
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		_, resp := runOneCall(t, &fakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute, Run: result}, Config{})
		matches, _ := filepath.Glob(filepath.Join(tmp, "agentry-*", "tool-outputs", "session-sess-1", "run_shell_command_call-1.txt"))
		if len(matches) != 1 || resp["output"] != masking.FormatTruncated(full, matches[0], 40_000) {
			t.Errorf("spill files %v", matches)
		}
	})
	t.Run("a failed save fails the call", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		evs, resp := runOneCall(t, &fakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute, Run: result}, Config{TempDir: file})
		if msg := fmt.Sprint(resp["error"]); !strings.HasPrefix(msg, "Failed to save the full output of run_shell_command:") {
			t.Errorf("response %.200v", resp)
		}
		if tr := find(evs, EventToolResponse)[0].ToolResponse; !tr.IsError || tr.Data["errorType"] != string(tools.ErrExecutionFailed) {
			t.Errorf("tool_response %+v", tr)
		}
	})
}

// TestCancelledShellOutputIsTruncated: a cancelled command's partial output,
// which travels in its error, is truncated like a finished command's.
func TestCancelledShellOutputIsTruncated(t *testing.T) {
	partial := "Command was cancelled by user before it could complete. Below is the output before it was cancelled:\n" + bigOutput()
	shell := &fakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute, Run: func(context.Context, tools.Call) (tools.Result, error) {
		return tools.Result{}, &tools.Error{Type: tools.ErrCancelled, Msg: partial, Err: context.Canceled}
	}}
	temp := t.TempDir()
	evs, resp := runOneCall(t, shell, Config{TempDir: temp})
	path := filepath.Join(temp, "tool-outputs", "session-sess-1", "run_shell_command_call-1.txt")
	if resp["error"] != masking.FormatTruncated(partial, path, 40_000) {
		t.Errorf("the model got %d characters of error", len(fmt.Sprint(resp["error"])))
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != partial {
		t.Errorf("spill file: %d bytes, %v", len(data), err)
	}
	tr := find(evs, EventToolResponse)[0].ToolResponse
	if !tr.IsError || tr.Data["errorType"] != string(tools.ErrCancelled) || tr.Data["outputFile"] != path {
		t.Errorf("tool_response %+v", tr.Data)
	}
}
