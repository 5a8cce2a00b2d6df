package runtime

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentry-dev/agentry/tools"
)

func TestModifiedArgs(t *testing.T) {
	diff := &tools.FileDiff{Before: "old file\n", After: "new file\n"}
	for _, tc := range []struct {
		name string
		req  ApprovalRequest
		want map[string]any
		err  error
	}{
		{"write_file takes the content", ApprovalRequest{Tool: "write_file", Args: map[string]any{"file_path": "a.txt", "content": "model's"}},
			map[string]any{"file_path": "a.txt", "content": "user's"}, nil},
		{"replace replaces the whole previewed file", ApprovalRequest{Tool: "replace", Diff: diff, Args: map[string]any{"file_path": "a.txt", "old_string": "old", "new_string": "new", "allow_multiple": true}},
			map[string]any{"file_path": "a.txt", "old_string": "old file\n", "new_string": "user's", "allow_multiple": false}, nil},
		{"replace without a preview", ApprovalRequest{Tool: "replace", Args: map[string]any{"file_path": "a.txt"}}, nil, ErrNoPreview},
		{"another tool", ApprovalRequest{Tool: "run_shell_command", Args: map[string]any{"command": "ls"}}, nil, ErrNotEditable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := cmp.Diff(map[string]any{}, tc.req.Args)
			got, err := ModifiedArgs(tc.req, "user's")
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if after := cmp.Diff(map[string]any{}, tc.req.Args); after != before {
				t.Errorf("the request's arguments changed")
			}
		})
	}
}
