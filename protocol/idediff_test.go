package protocol_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/ide/idediff"
)

// answeringIDE is a Differ whose one diff the test answers.
type answeringIDE struct {
	opened chan string
	answer chan idediff.Answer
	closed chan string
}

func newAnsweringIDE() *answeringIDE {
	return &answeringIDE{opened: make(chan string, 1), answer: make(chan idediff.Answer, 1), closed: make(chan string, 1)}
}

func (a *answeringIDE) CanDiff() bool { return true }

func (a *answeringIDE) OpenDiff(ctx context.Context, path, _ string) (idediff.Answer, error) {
	a.opened <- path
	select {
	case ans := <-a.answer:
		return ans, nil
	case <-ctx.Done():
		return idediff.Answer{}, ctx.Err()
	}
}

func (a *answeringIDE) CloseDiff(_ context.Context, path string) (*string, error) {
	a.closed <- path
	return nil, nil
}

// TestWSIDEAnswersAsTheTerminal: on a served session the IDE's diff
// wraps the terminal's approver (WithLocalApprover), so the content the
// user accepted in the IDE settles the clients' PENDING call as the
// terminal's answer: the clients see the call execute and the task
// complete, the file holds the IDE's content, and a late client answer
// is refused.
func TestWSIDEAnswersAsTheTerminal(t *testing.T) {
	terminal := &localApprover{start: make(chan struct{}), asked: make(chan struct{}), withdrawn: make(chan struct{})}
	ide := newAnsweringIDE()
	sh := newShared(t, []string{
		callTurn("", "write_file", map[string]any{"file_path": "f.txt", "content": "model\n"}),
		textTurn("written"),
	}, idediff.New(terminal, ide))
	w := sh.dialWS(t, dialOpts{})
	w.attached()
	w.send(1, "SendStreamingMessage", messageParams("write it"))
	task, call := pendingCall(t, w)
	<-terminal.asked
	file := filepath.Join(sh.settings.Workspace, "f.txt")
	if got := <-ide.opened; got != file {
		t.Fatalf("OpenDiff(%q), want %q", got, file)
	}
	ide.answer <- idediff.Answer{Accepted: true, Content: "mine\n"}
	<-terminal.withdrawn
	evs, _ := events(t, w.until(func(f wsFrame) bool {
		ev, _ := f.event(t)
		u, ok := ev.(*a2a.TaskStatusUpdateEvent)
		return ok && u.Status.State.Terminal()
	}))
	if d := describe(evs); !strings.Contains(d, "TOOL_CALL_UPDATE:working/EXECUTING") || !strings.HasSuffix(d, "STATE_CHANGE:completed") {
		t.Fatalf("after the IDE's answer the client saw %s", d)
	}
	if got, err := os.ReadFile(file); string(got) != "mine\n" {
		t.Fatalf("file = %q (%v), want the IDE's content", got, err)
	}
	w.send(2, "SendMessage", confirmParams(task, call, "cancel"))
	if f := w.next(); f.Error == nil || !strings.Contains(f.Error.Message, "by the terminal") {
		t.Fatalf("a late answer got %+v", f)
	}
}

// TestWSClientAnswerClosesTheIDEDiff: a client answering first withdraws
// the terminal's question, which closes the IDE's diff.
func TestWSClientAnswerClosesTheIDEDiff(t *testing.T) {
	terminal := &localApprover{start: make(chan struct{}), asked: make(chan struct{}), withdrawn: make(chan struct{})}
	ide := newAnsweringIDE()
	sh := newShared(t, []string{
		callTurn("", "write_file", map[string]any{"file_path": "f.txt", "content": "model\n"}),
		textTurn("written"),
	}, idediff.New(terminal, ide))
	w := sh.dialWS(t, dialOpts{})
	w.attached()
	w.send(1, "SendStreamingMessage", messageParams("write it"))
	task, call := pendingCall(t, w)
	<-terminal.asked
	file := <-ide.opened
	w.send(2, "SendStreamingMessage", confirmParams(task, call, "proceed_once"))
	if got := <-ide.closed; got != file {
		t.Fatalf("CloseDiff(%q), want %q", got, file)
	}
	w.until(func(f wsFrame) bool { return string(f.ID) == "2" && endsTask(t)(f) })
	if got, err := os.ReadFile(file); string(got) != "model\n" {
		t.Fatalf("file = %q (%v), want the model's content", got, err)
	}
}
