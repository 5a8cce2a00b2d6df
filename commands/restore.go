package commands

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentry-dev/agentry/internal/safefs"
	"github.com/agentry-dev/agentry/runtime"
)

// fileEdit is a file edit the conversation made, from its tool responses.
type fileEdit struct {
	callID, path, before, after string
	// created is set when the edit created the file, as its tool
	// reported (isNewFile); an empty before alone does not say so, since
	// the file may have existed empty.
	created bool
}

func editsOf(t Target) []fileEdit {
	var out []fileEdit
	for _, ev := range t.Events() {
		if ev.Type != runtime.EventToolResponse || ev.ToolResponse.IsError || ev.ThreadID != "" {
			continue
		}
		d := ev.ToolResponse.Display
		if d == nil || d.Result == nil || d.Result.Type != "diff" {
			continue
		}
		// A response without isNewFile (another tool's diff) is restored
		// to its content, never removed: removing could lose a file.
		created, _ := ev.ToolResponse.Data["isNewFile"].(bool)
		out = append(out, fileEdit{callID: ev.ToolResponse.RequestID, path: d.Result.Path,
			before: d.Result.BeforeText, after: d.Result.AfterText, created: created && d.Result.BeforeText == ""})
	}
	return out
}

// restoreRoot is the directory a restore is confined to: the workspace
// when the file lies in it, else (a file of another workspace root) the
// file's own directory, so that at least its name cannot be swapped for a
// symlink between the check and the write.
func restoreRoot(workspace, path string) string {
	if real, err := filepath.EvalSymlinks(workspace); err == nil {
		workspace = real
	}
	if workspace != "" {
		if rel, err := filepath.Rel(workspace, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return workspace
		}
	}
	return filepath.Dir(path)
}

// runRestore lists the conversation's edits or undoes one: the file gets
// its content from before the edit, if it still holds what the edit
// wrote (otherwise a later change would be lost, and it refuses).
func runRestore(_ context.Context, t Target, args string, out func(string)) error {
	edits := editsOf(t)
	if args == "" || args == "list" {
		if len(edits) == 0 {
			out("No file edits in this conversation.")
			return nil
		}
		var b strings.Builder
		b.WriteString("File edits (newest last); /restore <tool_call_id> undoes one:\n")
		for _, e := range edits {
			fmt.Fprintf(&b, "- %s: %s\n", e.callID, e.path)
		}
		out(b.String())
		return nil
	}
	if err := t.Busy(); err != nil {
		return err
	}
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		if e.callID != args {
			continue
		}
		root := restoreRoot(t.Workspace(), e.path)
		// The file should hold what the edit wrote: reading one byte more
		// tells a longer file apart without reading it all.
		cur, err := safefs.ReadFileIn(root, e.path, int64(len(e.after)))
		if err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, safefs.ErrTooLarge) {
			return fmt.Errorf("restore %s: %w", e.path, err)
		}
		if err != nil || string(cur) != e.after {
			return fmt.Errorf("restore %s: the file changed after edit %s; it was left as it is", e.path, e.callID)
		}
		if e.created {
			if err := os.Remove(e.path); err != nil {
				return fmt.Errorf("restore %s: %w", e.path, err)
			}
			out(fmt.Sprintf("Removed %s, which edit %s created.", e.path, e.callID))
			return nil
		}
		if err := safefs.WriteFileIn(root, e.path, []byte(e.before), 0o644); err != nil {
			return fmt.Errorf("restore %s: %w", e.path, err)
		}
		out(fmt.Sprintf("Restored %s to its content before edit %s.", e.path, e.callID))
		return nil
	}
	return fmt.Errorf("no file edit %s in this conversation (/restore lists them)", args)
}
