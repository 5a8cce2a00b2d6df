package idediff_test

import (
	"context"
	"fmt"

	"github.com/agentry-dev/agentry/ide/idediff"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/tools"
)

// editorAccepting is an IDE whose user edits the proposal and accepts it.
type editorAccepting struct{}

func (editorAccepting) CanDiff() bool { return true }

func (editorAccepting) OpenDiff(_ context.Context, path, proposed string) (idediff.Answer, error) {
	fmt.Printf("diff of %s: %q\n", path, proposed)
	return idediff.Answer{Accepted: true, Content: "package main // edited\n"}, nil
}

func (editorAccepting) CloseDiff(context.Context, string) (*string, error) { return nil, nil }

// terminal is a dialog nobody answers before the IDE does.
type terminal struct{}

func (terminal) Approve(ctx context.Context, _ runtime.ApprovalRequest) (runtime.Outcome, error) {
	<-ctx.Done()
	fmt.Println("terminal dialog withdrawn")
	return runtime.Cancel, ctx.Err()
}

// The IDE's diff and the terminal's dialog race for a write_file
// confirmation; the user's edited content in the IDE wins.
func Example() {
	policy, _ := runtime.NewPolicy(runtime.ApprovalDefault, nil)
	approver := idediff.New(terminal{}, editorAccepting{}, idediff.WithMode(policy.Mode))
	outcome, args, err := approver.ApproveEdit(context.Background(), runtime.ApprovalRequest{
		CallID: "c1", Tool: "write_file", Kind: tools.KindEdit,
		Args: map[string]any{"file_path": "main.go", "content": "package main\n"},
		Diff: &tools.FileDiff{Path: "/work/main.go", After: "package main\n"},
	})
	fmt.Println(outcome, err)
	fmt.Printf("content %q, modified by user: %v\n", args["content"], args[tools.ModifiedByUser])
	// Output:
	// diff of /work/main.go: "package main\n"
	// terminal dialog withdrawn
	// proceed_once <nil>
	// content "package main // edited\n", modified by user: true
}
