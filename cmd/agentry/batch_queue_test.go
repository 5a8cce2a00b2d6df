package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/batchq"
)

func TestDefaultBatchName(t *testing.T) {
	data, settings := []byte(`{"id":"a","prompt":"p"}`+"\n"), []byte(`{"workspace":"/w"}`)
	a := defaultBatchName("/x/my prompts.jsonl", data, settings)
	if !strings.HasPrefix(a, "my-prompts-") || len(a) != len("my-prompts-")+10 {
		t.Errorf("name %q, want my-prompts- and 10 hex digits", a)
	}
	if b := defaultBatchName("/elsewhere/my prompts.jsonl", data, settings); b != a {
		t.Errorf("same content and flags named %q and %q", a, b)
	}
	for what, b := range map[string]string{
		"content":  defaultBatchName("/x/my prompts.jsonl", append(data, '\n'), settings),
		"settings": defaultBatchName("/x/my prompts.jsonl", data, []byte(`{"workspace":"/v"}`)),
	} {
		if b == a {
			t.Errorf("other %s, same name %q", what, a)
		}
	}
	if n := defaultBatchName("-", data, settings); !strings.HasPrefix(n, "stdin-") {
		t.Errorf("stdin batch named %q", n)
	}
}

// TestBatchItems: the queued batch reads its input as the in-process one
// does: blank lines skipped, bad lines become their error results named as
// today, a duplicate id goes under line-N, and every item keeps its line
// number.
func TestBatchItems(t *testing.T) {
	in := "\ufeff" + `{"id":"a","prompt":"one","model":"flash"}` + "\n\n" +
		`{"id":"b"}` + "\n" +
		`{"id":"a","prompt":"again"}` + "\n" +
		`not json` + "\n" +
		`{"id":"c","prompt":"three","approval_mode":"plan"}`
	items, err := batchItems([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	var seqs []int
	for _, it := range items {
		ids = append(ids, it.ID)
		seqs = append(seqs, it.Seq)
	}
	if want := []string{"a", "b", "line-4", "line-5", "c"}; !slices.Equal(ids, want) {
		t.Errorf("ids %q, want %q", ids, want)
	}
	if want := []int{1, 3, 4, 5, 6}; !slices.Equal(seqs, want) {
		t.Errorf("line numbers %v, want %v", seqs, want)
	}
	var req queuedRequest
	if err := json.Unmarshal(items[0].Request, &req); err != nil || req != (queuedRequest{Line: 1, Prompt: "one", Model: "flash"}) {
		t.Errorf("a's request = %+v, %v", req, err)
	}
	for _, i := range []int{1, 2, 3} {
		d := items[i].Done
		if d == nil || d.Status != batchq.StatusError || items[i].Request != nil {
			t.Errorf("%s: %+v, want an error result and no request", items[i].ID, items[i])
			continue
		}
		var res batchResult
		if err := json.Unmarshal(d.Line, &res); err != nil || res.ID != items[i].ID || res.Error == nil || res.Error.Type != "FatalInputError" {
			t.Errorf("%s's line %s: %v", items[i].ID, d.Line, err)
		}
	}
	if items, err := batchItems([]byte("\n  \n")); err != nil || len(items) != 0 {
		t.Errorf("blank input: %v, %v", items, err)
	}
}

// TestQueuedSettingsFlags: the snapshot becomes the batch flags it stands
// for, set only when given.
func TestQueuedSettingsFlags(t *testing.T) {
	fs := queuedSettings{Model: "flash", AllowedTools: []string{"write_file", "run_shell_command(git status, -s)"}}.flags()
	if m, _ := fs.GetString("model"); m != "flash" || !fs.Changed("model") {
		t.Errorf("model %q changed %v", m, fs.Changed("model"))
	}
	if fs.Changed("approval-mode") {
		t.Error("approval-mode set though not in the snapshot")
	}
	tools, _ := fs.GetStringSlice("allowed-tools")
	if !slices.Equal(tools, []string{"write_file", "run_shell_command(git status, -s)"}) || !fs.Changed("allowed-tools") {
		t.Errorf("allowed-tools %q", tools)
	}
	if fs.Changed("policy") || fs.Changed("admin-policy") || fs.Changed("allowed-mcp-server-names") {
		t.Error("a policy flag set though not in the snapshot")
	}
	// The policy flags travel too.
	fs = queuedSettings{Policy: []string{"/p/a.toml", "/p/dir"}, AdminPolicy: []string{"/adm"}, AllowedMCPServerNames: []string{"gh"}}.flags()
	for name, want := range map[string][]string{
		"policy": {"/p/a.toml", "/p/dir"}, "admin-policy": {"/adm"}, "allowed-mcp-server-names": {"gh"},
	} {
		if got, _ := fs.GetStringSlice(name); !slices.Equal(got, want) || !fs.Changed(name) {
			t.Errorf("--%s = %q (changed %v), want %q", name, got, fs.Changed(name), want)
		}
	}
}
