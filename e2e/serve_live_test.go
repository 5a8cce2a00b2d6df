package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/a2aproject/a2a-go/v2/a2apb/v1/pbconv"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentry-dev/agentry/internal/fakegemini"
)

// TestServeLiveStream: `agentry serve` with the fake Gemini server, whose
// model asks for two shell commands that need approval, then answers. A
// client built from a2a-go's generated gRPC code alone (the method as A2A's
// proposal names it) drives one SendLiveMessage stream: the prompt, each
// confirmation answered on the stream when it asks, the answer, and the
// server's half-close with status OK.
func TestServeLiveStream(t *testing.T) {
	fake := fakegemini.New(t)
	fake.Enqueue(
		fakegemini.Call("run_shell_command", map[string]any{"command": "echo one > one.txt"}),
		fakegemini.Call("run_shell_command", map[string]any{"command": "echo two > two.txt"}),
		fakegemini.Text("Both ", "ran."),
	)
	const token = "e2e-live-token-0123456789abcdef"
	e := newEnv(t)
	e.geminiEnv(fake)
	e.set("AGENTRY_A2A_TOKEN=" + token)
	srv := e.serve("--port", "0", "-w", e.ws, "-m", "gemini-2.5-flash")

	resp, err := http.Get(srv.url + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	card, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !strings.Contains(string(card), `"bidiStreaming": true`) {
		t.Fatalf("the card does not declare bidiStreaming (%v):\n%s", err, card)
	}

	conn, err := grpc.NewClient(strings.TrimPrefix(srv.url, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token, "a2a-extensions", devtoolURI)
	stream, err := conn.NewStream(ctx, &grpc.StreamDesc{StreamName: "SendLiveMessage", ServerStreams: true, ClientStreams: true}, "/lf.a2a.v1.A2AService/SendLiveMessage")
	if err != nil {
		t.Fatal(err)
	}
	send := func(id string, part *a2apb.Part) {
		t.Helper()
		m := &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: id, Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{part}}}
		if err := stream.SendMsg(m); err != nil {
			t.Fatalf("send %s: %v", id, err)
		}
	}
	send("prompt", &a2apb.Part{Content: &a2apb.Part_Text{Text: "Run the two commands."}})

	var (
		states  []string
		text    strings.Builder
		pending string
		answers int
		taskID  a2a.TaskID
	)
	for {
		var r a2apb.StreamResponse
		err := stream.RecvMsg(&r)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the stream ended with %v after %v; server stderr:\n%s", err, states, srv.errText())
		}
		ev, err := pbconv.FromProtoStreamResponse(&r)
		if err != nil {
			t.Fatal(err)
		}
		if task, ok := ev.(*a2a.Task); ok {
			taskID = task.ID
			states = append(states, "task:"+string(task.Status.State))
			continue
		}
		u, ok := ev.(*a2a.TaskStatusUpdateEvent)
		if !ok {
			continue
		}
		if u.TaskID != taskID {
			t.Fatalf("an update of task %s on the stream of task %s", u.TaskID, taskID)
		}
		kind := ""
		if dev, ok := u.Metadata[devtoolURI].(map[string]any); ok {
			kind, _ = dev["kind"].(string)
		}
		if m := u.Status.Message; m != nil {
			for _, p := range m.Parts {
				switch c := p.Content.(type) {
				case a2a.Text:
					if kind == "TEXT_CONTENT" {
						text.WriteString(string(c))
					}
				case a2a.Data:
					call, _ := c.Value.(map[string]any)
					if call["confirmation_request"] != nil && call["status"] == "PENDING" {
						pending, _ = call["tool_call_id"].(string)
					}
				}
			}
		}
		if u.Status.State == a2a.TaskStateInputRequired {
			states = append(states, "input-required")
			if pending == "" {
				t.Fatalf("input-required without a confirmation request: %v", states)
			}
			answers++
			// Answered on the stream that asked, without ids: the
			// stream's own.
			data, err := structpb.NewValue(map[string]any{"tool_call_id": pending, "selected_option_id": "proceed_once"})
			if err != nil {
				t.Fatal(err)
			}
			send("answer-"+pending, &a2apb.Part{Content: &a2apb.Part_Data{Data: data}})
			pending = ""
		}
		if u.Status.State.Terminal() {
			states = append(states, string(u.Status.State))
		}
	}
	if answers != 2 || len(states) == 0 || states[len(states)-1] != string(a2a.TaskStateCompleted) {
		t.Fatalf("states %v after %d answers, want two questions answered and completed", states, answers)
	}
	if text.String() != "Both ran." {
		t.Fatalf("answer %q", text.String())
	}
	if got := stream.Trailer().Get("a2a-extensions"); len(got) != 1 || got[0] != devtoolURI {
		t.Fatalf("trailer a2a-extensions %v", got)
	}
	for _, f := range []string{"one.txt", "two.txt"} {
		if _, err := os.Stat(filepath.Join(e.ws, f)); err != nil {
			t.Fatalf("the approved command did not run: %v", err)
		}
	}
}

// followLive reattaches a SendLiveMessage stream to a task of the server
// at url (a message with its id and no parts) and reads it to the end:
// the task, its updates, then the half-close with status OK after the
// completed update. It returns what went wrong, if anything.
func followLive(url, token string, task a2a.TaskID) error {
	conn, err := grpc.NewClient(strings.TrimPrefix(url, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token, "a2a-extensions", devtoolURI)
	stream, err := conn.NewStream(ctx, &grpc.StreamDesc{StreamName: "SendLiveMessage", ServerStreams: true, ClientStreams: true}, "/lf.a2a.v1.A2AService/SendLiveMessage")
	if err != nil {
		return err
	}
	if err := stream.SendMsg(&a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "reattach", Role: a2apb.Role_ROLE_USER, TaskId: string(task)}}); err != nil {
		return err
	}
	var got []string
	for {
		var r a2apb.StreamResponse
		err := stream.RecvMsg(&r)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("the live stream ended with %v after %v", err, got)
		}
		switch {
		case r.GetTask() != nil:
			got = append(got, "task:"+r.GetTask().GetStatus().GetState().String())
		case r.GetStatusUpdate() != nil:
			got = append(got, r.GetStatusUpdate().GetStatus().GetState().String())
		}
	}
	if len(got) < 2 || !strings.HasPrefix(got[0], "task:") || got[len(got)-1] != "TASK_STATE_COMPLETED" {
		return fmt.Errorf("the live stream carried %v, want the task, then its updates to completed", got)
	}
	return nil
}
