package commands_test

import (
	"context"
	"fmt"
	"log"

	"github.com/agentry-dev/agentry/commands"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/runtime/llm"
)

// A terminal reads a line, runs it as a command when it is one, and adds
// its own commands to the built-in ones.
func ExampleRegistry() {
	ctx := context.Background()
	sess, err := runtime.New(ctx, runtime.Config{Model: "gemini-2.5-flash", Resolver: llm.NewResolver(llm.ResolverConfig{})})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()

	quit := commands.Command{Name: "quit", Aliases: []string{"exit"}, Description: "Leave agentry",
		Run: func(_ context.Context, _ commands.Target, _ string, out func(string)) error {
			out("Bye.")
			return nil
		}}
	reg, err := commands.New(commands.Config{Extra: []commands.Command{quit}})
	if err != nil {
		log.Fatal(err)
	}
	for _, line := range []string{"/model", "/approval-mode plan", "/teleport", "/exit", "hello"} {
		path, args, ok := reg.Parse(line)
		if !ok {
			fmt.Printf("%q is a prompt\n", line)
			continue
		}
		if err := reg.Run(ctx, sess, path, args, func(s string) { fmt.Println(s) }); err != nil {
			fmt.Println("error:", err)
		}
	}
	// Output:
	// Model: gemini-2.5-flash
	// Approval mode set to plan.
	// error: unknown command /teleport (commands: model, rewind, tools, restore, stats, compress, approval-mode, mcp, agents, quit)
	// Bye.
	// "hello" is a prompt
}
