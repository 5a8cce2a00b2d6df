package compose_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentry-dev/agentry/compose"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/runtime"
)

// Build a session from settings and follow one stream of its events. The
// replayed model needs no key or network; any model name works the same.
func ExampleFromSettings() {
	dir, _ := os.MkdirTemp("", "agentry-example")
	defer os.RemoveAll(dir)
	s := config.Defaults()
	s.Workspace = dir
	s.Home = filepath.Join(dir, ".agentry")
	s.Session.Store = config.SessionStoreMemory
	replay := filepath.Join(dir, "model.jsonl")
	os.WriteFile(replay, []byte(`{"method":"generateContentStream","response":[{"candidates":[{"content":{"role":"model","parts":[{"text":"Hello from agentry."}]},"finishReason":"STOP"}]}]}`+"\n"), 0o600)
	s.Model.Name = "replay:" + replay

	ctx := context.Background()
	sess, err := compose.FromSettings(ctx, &s, compose.Options{})
	if err != nil {
		panic(err)
	}
	defer sess.Close()
	id, err := sess.Send(ctx, runtime.Send{Message: &runtime.SendMessage{Content: []runtime.ContentPart{runtime.TextPart("Say hello")}}})
	if err != nil {
		panic(err)
	}
	for ev, err := range sess.Stream(ctx, id) {
		if err != nil {
			panic(err)
		}
		if ev.Type == runtime.EventMessage && ev.Message.Role == runtime.RoleAgent {
			for _, p := range ev.Message.Content {
				fmt.Print(p.Text)
			}
		}
		if ev.Type == runtime.EventAgentEnd {
			fmt.Println()
			fmt.Println("end:", ev.AgentEnd.Reason)
		}
	}
	// Output:
	// Hello from agentry.
	// end: completed
}
