package protocol_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/ide/idediff"
	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/protocol"
	"github.com/agentry-dev/agentry/runtime"
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

// ideWrite is a served session whose terminal approver is wrapped in the
// IDE's diffs, and a client whose write_file call of f.txt waits on both.
type ideWrite struct {
	sh       *shared
	w        *wsConn
	terminal *localApprover
	ide      *answeringIDE
	task     a2a.TaskID
	call     string
}

// startIDEWrite sends the prompt whose write_file call is pending, and
// returns once the terminal has been asked.
func startIDEWrite(t *testing.T) *ideWrite {
	t.Helper()
	p := &ideWrite{
		terminal: &localApprover{start: make(chan struct{}), asked: make(chan struct{}), withdrawn: make(chan struct{})},
		ide:      newAnsweringIDE(),
	}
	p.sh = newShared(t, []string{
		callTurn("", "write_file", map[string]any{"file_path": "f.txt", "content": "model\n"}),
		textTurn("written"),
	}, idediff.New(p.terminal, p.ide))
	p.w = p.sh.dialWS(t, dialOpts{})
	p.w.attached()
	p.w.send(1, "SendStreamingMessage", messageParams("write it"))
	p.task, p.call = pendingCall(t, p.w)
	<-p.terminal.asked
	return p
}

// TestWSIDEAnswersAsTheTerminal: on a served session the IDE's diff
// wraps the terminal's approver (WithLocalApprover), so the content the
// user accepted in the IDE settles the clients' PENDING call as the
// terminal's answer: the clients see the call execute and the task
// complete, the file holds the IDE's content, and a late client answer
// is refused.
func TestWSIDEAnswersAsTheTerminal(t *testing.T) {
	p := startIDEWrite(t)
	sh, w, terminal, ide, task, call := p.sh, p.w, p.terminal, p.ide, p.task, p.call
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
	p := startIDEWrite(t)
	w, ide, task, call := p.w, p.ide, p.task, p.call
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

// besideIDE serves contexts whose IDE (Config.Beside) shows their edits.
func besideIDE(ide idediff.Differ) harnessOption {
	return func(cfg *protocol.Config, _ *config.Settings) {
		cfg.Beside = func(_ string, sess protocol.Session) runtime.EditingApprover {
			return idediff.Beside(ide, idediff.WithMode(sess.ApprovalMode))
		}
	}
}

// TestBesideIDEAnswersForAServedContext: on a context of agentry serve
// (not adopted), the IDE beside the clients answers a write_file's
// confirmation the client left pending: the task goes on and completes,
// the file holds the content accepted in the IDE, and the client's late
// answer is refused as already given by the IDE.
func TestBesideIDEAnswersForAServedContext(t *testing.T) {
	ide := newAnsweringIDE()
	h := newHarness(t, []string{
		callTurn("", "write_file", map[string]any{"file_path": "f.txt", "content": "model\n"}),
		textTurn("written"),
	}, besideIDE(ide))
	c := h.client("jsonrpc")
	first := collect(t, c, userMessage("write it", ""))
	if got := describe(first); !strings.HasSuffix(got, "PENDING+confirm STATE_CHANGE:input-required") {
		t.Fatalf("first stream: %s", got)
	}
	task := first[0].(*a2a.Task)
	call := toolCallOf(first[len(first)-2].(*a2a.TaskStatusUpdateEvent)).ToolCallID
	file := filepath.Join(h.settings.Workspace, "f.txt")
	if got := <-ide.opened; got != file {
		t.Fatalf("OpenDiff(%q), want %q", got, file)
	}
	ide.answer <- idediff.Answer{Accepted: true, Content: "mine\n"}
	proctest.Eventually(t, "the task to complete", func() bool {
		got, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: task.ID})
		return err == nil && got.Status.State == a2a.TaskStateCompleted
	})
	if got, err := os.ReadFile(file); string(got) != "mine\n" {
		t.Fatalf("file = %q (%v), want the IDE's content", got, err)
	}
	_, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: confirm(task, call, "proceed_once")})
	if err == nil || !strings.Contains(err.Error(), "by the IDE") {
		t.Fatalf("a late client answer: %v, want it refused as the IDE's", err)
	}
}

// TestBesideIDEDiffClosedByAClient: the client answering first closes
// the IDE's diff, and the model's content is written.
func TestBesideIDEDiffClosedByAClient(t *testing.T) {
	ide := newAnsweringIDE()
	h := newHarness(t, []string{
		callTurn("", "write_file", map[string]any{"file_path": "f.txt", "content": "model\n"}),
		textTurn("written"),
	}, besideIDE(ide))
	c := h.client("jsonrpc")
	first := collect(t, c, userMessage("write it", ""))
	task := first[0].(*a2a.Task)
	call := toolCallOf(first[len(first)-2].(*a2a.TaskStatusUpdateEvent)).ToolCallID
	file := <-ide.opened
	second := collect(t, c, confirm(task, call, "proceed_once"))
	if got := describe(second); !strings.HasPrefix(got, "TOOL_CALL_UPDATE:working/EXECUTING") || !strings.HasSuffix(got, "STATE_CHANGE:completed") {
		t.Fatalf("after the client's answer: %s", got)
	}
	if got := <-ide.closed; got != file {
		t.Fatalf("CloseDiff(%q), want %q", got, file)
	}
	if got, err := os.ReadFile(file); string(got) != "model\n" {
		t.Fatalf("file = %q (%v), want the model's content", got, err)
	}
}

// TestBesideShellConfirmationIsTheClients: a confirmation the IDE cannot
// show (a shell command) is left to the clients.
func TestBesideShellConfirmationIsTheClients(t *testing.T) {
	ide := newAnsweringIDE()
	h := newHarness(t, []string{
		// Not one of the engine's known-safe commands (echo would run
		// without asking).
		callTurn("", "run_shell_command", map[string]any{"command": "make hi"}),
		textTurn("ran"),
	}, besideIDE(ide))
	c := h.client("jsonrpc")
	first := collect(t, c, userMessage("run it", ""))
	task := first[0].(*a2a.Task)
	call := toolCallOf(first[len(first)-2].(*a2a.TaskStatusUpdateEvent)).ToolCallID
	second := collect(t, c, confirm(task, call, "proceed_once"))
	if got := describe(second); !strings.HasSuffix(got, "STATE_CHANGE:completed") {
		t.Fatalf("after the client's answer: %s", got)
	}
	select {
	case p := <-ide.opened:
		t.Fatalf("the IDE was asked to show %q", p)
	default:
	}
}
