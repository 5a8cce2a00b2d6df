package liveclient_test

import (
	"context"
	"fmt"
	"log"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/protocol/liveclient"
)

// A task that asks for a confirmation is answered on the stream it
// streams on; the stream ends when the task does.
func Example() {
	ctx := context.Background()
	conn, err := grpc.NewClient("127.0.0.1:41242", grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Run the tests"))
	st, err := liveclient.Open(ctx, conn, &a2a.SendMessageRequest{Message: msg},
		liveclient.WithToken("the token agentry serve printed"), liveclient.WithExtensions(devtool.URI))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	for ev, err := range st.Events() {
		if err != nil {
			log.Fatal(err)
		}
		u, ok := ev.(*a2a.TaskStatusUpdateEvent)
		if !ok || u.Status.State != a2a.TaskStateInputRequired {
			continue
		}
		// A plain reply answers the pending confirmation; a
		// ToolCallConfirmation data part does too.
		if err := st.Send(&a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("yes"))}); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("task", st.TaskID(), "ended")
}
