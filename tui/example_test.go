package tui_test

import (
	"context"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"

	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/tui"
)

// echoSession answers every prompt with its text.
type echoSession struct{ prompts []string }

func (s *echoSession) ID() string    { return "example" }
func (s *echoSession) Model() string { return "echo" }
func (s *echoSession) Send(_ context.Context, p runtime.Send) (string, error) {
	s.prompts = append(s.prompts, p.Message.Content[0].Text)
	return "s1", nil
}
func (s *echoSession) Stream(context.Context, string) iter.Seq2[runtime.Event, error] {
	return func(yield func(runtime.Event, error) bool) {
		msg := &runtime.Message{Role: runtime.RoleAgent, Content: []runtime.ContentPart{runtime.TextPart("echo")}}
		if yield(runtime.Event{Type: runtime.EventMessage, Message: msg}, nil) {
			yield(runtime.Event{Type: runtime.EventAgentEnd, AgentEnd: &runtime.AgentEnd{Reason: runtime.EndCompleted}}, nil)
		}
	}
}
func (s *echoSession) Abort(error)             {}
func (s *echoSession) Events() []runtime.Event { return nil }
func (s *echoSession) Close() error            { return nil }

func ExampleRun() {
	// The approver is created first: the session's composition asks it
	// about tool calls, and the terminal shows its dialogs.
	approver := tui.NewApprover()
	session := &echoSession{} // in agentry, built with approver as its runtime.Approver

	// The input types /quit; a real terminal is the default
	// (nil Input and Output).
	err := tui.Run(context.Background(), tui.Config{
		Session:   session,
		Approver:  approver,
		Workspace: "/src/project",
		Input:     strings.NewReader("/quit\r"),
		Output:    io.Discard,
		Env:       append(os.Environ(), "NO_COLOR=1"),
		Width:     80, Height: 24,
	})
	fmt.Println(err, session.prompts)
	// Output: <nil> []
}
