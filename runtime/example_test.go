package runtime_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/processors"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/runtime/llm"
)

// replayModel writes a one-turn replayed model answering text (gemini-cli's
// --fake-responses format) and returns its model name.
func replayModel(dir, text string) string {
	p := filepath.Join(dir, "model.jsonl")
	line := fmt.Sprintf(`{"method":"generateContentStream","response":[{"candidates":[{"content":{"role":"model","parts":[{"text":%q}]},"finishReason":"STOP"}]}]}`, text)
	if err := os.WriteFile(p, []byte(line+"\n"), 0o600); err != nil {
		panic(err)
	}
	return "replay:" + p
}

// requestLogger is a request processor: it sees, and may rewrite, every
// model request after ADK has built it.
type requestLogger struct{}

func (requestLogger) Name() string { return "request-logger" }

func (requestLogger) ProcessRequest(_ agent.Context, req *model.LLMRequest) error {
	last := req.Contents[len(req.Contents)-1]
	fmt.Printf("request with %d content(s), the last from the %s: %q\n", len(req.Contents), last.Role, last.Parts[0].Text)
	// A processor rewrites the request in place, for example its
	// instruction.
	req.Config.SystemInstruction = genai.NewContentFromText("Answer briefly.", genai.RoleUser)
	return nil
}

// A custom request processor in the chain every model request passes
// (content, masking and routing are processors too).
func ExampleNew_requestProcessor() {
	dir, _ := os.MkdirTemp("", "agentry-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	sess, err := runtime.New(ctx, runtime.Config{
		Workspace: dir,
		Model:     replayModel(dir, "Hi."),
		Resolver:  llm.NewResolver(llm.ResolverConfig{}),
		Chain:     processors.NewChain(requestLogger{}),
		TempDir:   dir,
	})
	if err != nil {
		panic(err)
	}
	defer sess.Close()
	id, err := sess.Send(ctx, runtime.Send{Message: &runtime.SendMessage{Content: []runtime.ContentPart{runtime.TextPart("Say hi")}}})
	if err != nil {
		panic(err)
	}
	for ev, err := range sess.Stream(ctx, id) {
		if err != nil {
			panic(err)
		}
		if ev.Type == runtime.EventAgentEnd {
			fmt.Println("end:", ev.AgentEnd.Reason)
		}
	}
	// Output:
	// request with 1 content(s), the last from the user: "Say hi"
	// end: completed
}
