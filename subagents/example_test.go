package subagents_test

import (
	"context"
	"fmt"
	"time"

	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/subagents"
)

// terminal stands for the parent's approver: it shows the request and
// allows the call.
type terminal struct{}

func (terminal) Approve(_ context.Context, r runtime.ApprovalRequest) (runtime.Outcome, error) {
	fmt.Println("asked:", r.DisplayName)
	return runtime.ProceedOnce, nil
}

// A subagent's call goes to the parent's approver named with the agent,
// its time limit paused meanwhile; without a parent approver it is
// declined.
func ExampleChildApprover() {
	limit := &subagents.Deadline{}
	limit.Start(10*time.Minute, func() { fmt.Println("timed out") })
	defer limit.Stop()
	o, _ := subagents.ChildApprover(terminal{}, "Checker", limit).Approve(context.Background(),
		runtime.ApprovalRequest{CallID: "c1", Tool: "run_shell_command", DisplayName: "Shell"})
	fmt.Println(o)
	o, _ = subagents.ChildApprover(nil, "Checker", limit).Approve(context.Background(), runtime.ApprovalRequest{CallID: "c2"})
	fmt.Println(o)
	// Output:
	// asked: Checker › Shell
	// proceed_once
	// cancel
}
