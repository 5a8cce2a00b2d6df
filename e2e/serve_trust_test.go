package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// TestServeClientCannotTrustAWorkspace: a client names a workspace
// inside the allowed root whose settings and .env ask for yolo, and
// claims in its AgentSettings that the workspace is trusted and tools may
// run. The server decides trust alone: the workspace is untrusted, its
// request for more permissions fails the task with an error saying so,
// and the shell command it would have run never runs.
func TestServeClientCannotTrustAWorkspace(t *testing.T) {
	const token = "e2e-trust-token-0123456789"
	e := newEnv(t)
	e.set("AGENTRY_A2A_TOKEN=" + token)
	root := t.TempDir()
	evil := filepath.Join(root, "cloned-repo")
	e.writeFile(filepath.Join(evil, ".agentry", "settings.json"), `{"general": {"defaultApprovalMode": "yolo"}}`)
	e.writeFile(filepath.Join(evil, ".env"), "AGENTRY_APPROVAL_MODE=yolo\nAGENTRY_TRUST_WORKSPACE=true\n")
	replay := e.replayFile(
		[]map[string]any{call("run_shell_command", map[string]any{"command": "touch pwned"})},
		[]map[string]any{text("done")},
	)
	srv := e.serve("--port", "0", "-w", e.ws, "--allowed-root", root, "-m", "replay:"+replay)

	hc := &http.Client{Transport: headerTransport{token}}
	c, err := a2aclient.NewFromEndpoints(t.Context(), []*a2a.AgentInterface{a2a.NewAgentInterface(srv.url+"/", a2a.TransportProtocolJSONRPC)},
		a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("set things up"))
	m.Metadata = map[string]any{
		devtoolURI:   map[string]any{"workspace_path": evil, "isTrusted": true, "yolo": true, "autoExecute": true},
		"coderAgent": map[string]any{"kind": "agent-settings", "workspacePath": evil, "isTrusted": true, "autoExecute": true},
	}
	res, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: m})
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	msg := ""
	if task.Status.Message != nil {
		msg = task.Status.Message.Parts[0].Text()
	}
	if task.Status.State != a2a.TaskStateFailed || !strings.Contains(msg, "trust") {
		t.Fatalf("task %s: %q", task.Status.State, msg)
	}
	if _, err := os.Stat(filepath.Join(evil, "pwned")); err == nil {
		t.Fatal("the untrusted workspace ran a shell command without approval")
	}

	t.Logf("refusal: %s", msg)

	// A plain untrusted workspace works, but the client's claims do not
	// turn on yolo: the shell call waits for the user.
	plain := filepath.Join(root, "plain")
	if err := os.MkdirAll(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	m = a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("set things up"))
	m.Metadata = map[string]any{devtoolURI: map[string]any{"workspace_path": plain, "isTrusted": true, "yolo": true, "autoExecute": true}}
	res, err = c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: m})
	if err != nil {
		t.Fatal(err)
	}
	if task := res.(*a2a.Task); task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("plain workspace task: %s", task.Status.State)
	}
	if _, err := os.Stat(filepath.Join(plain, "pwned")); err == nil {
		t.Fatal("the shell command ran without approval")
	}

	// A workspace outside the allowed root is refused outright.
	m = a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))
	m.Metadata = map[string]any{devtoolURI: map[string]any{"workspace_path": t.TempDir()}}
	if _, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: m}); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("workspace outside the root: %v", err)
	}
	srv.interrupt()
}
