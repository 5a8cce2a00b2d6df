package protocol_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/agentry-dev/agentry/compose"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/protocol"
)

// Serve sessions over A2A and talk to them with a2a-go's client, as any A2A
// client would (agentry serve adds the bearer token, Host and Origin
// checks and connection limits in front of the same handler).
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "agentry-example")
	defer os.RemoveAll(dir)
	replay := filepath.Join(dir, "model.jsonl")
	os.WriteFile(replay, []byte(`{"method":"generateContentStream","response":[{"candidates":[{"content":{"role":"model","parts":[{"text":"Hello over A2A."}]},"finishReason":"STOP"}]}]}`+"\n"), 0o600)
	s := config.Defaults()
	s.Workspace, s.Home = dir, filepath.Join(dir, ".agentry")
	s.Session.Store = config.SessionStoreMemory
	s.Model.Name = "replay:" + replay

	httpSrv := httptest.NewUnstartedServer(nil)
	srv, err := protocol.New(protocol.Config{
		// Each A2A context is a session built from the settings.
		NewSession: func(ctx context.Context, r protocol.SessionRequest) (protocol.Session, error) {
			ws := s
			ws.Workspace = r.Workspace
			return compose.FromSettings(ctx, &ws, compose.Options{SessionID: r.ContextID, Approver: r.Approver})
		},
		Workspace: dir,
		Model:     s.Model.Name,
		BaseURL:   "http://" + httpSrv.Listener.Addr().String(),
		Logger:    slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	httpSrv.Config.Handler = srv.Handler()
	httpSrv.Start()
	defer httpSrv.Close()

	ctx := context.Background()
	client, err := a2aclient.NewFromEndpoints(ctx, []*a2a.AgentInterface{a2a.NewAgentInterface(httpSrv.URL+"/", a2a.TransportProtocolJSONRPC)})
	if err != nil {
		panic(err)
	}
	defer client.Destroy()
	res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Say hello"))})
	if err != nil {
		panic(err)
	}
	task := res.(*a2a.Task)
	fmt.Println("state:", task.Status.State)
	for _, art := range task.Artifacts {
		for _, p := range art.Parts {
			fmt.Printf("%s: %s\n", art.Name, p.Text())
		}
	}
	// Output:
	// state: TASK_STATE_COMPLETED
	// answer: Hello over A2A.
}
