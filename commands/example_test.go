package commands_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

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

// weatherPrompts is an MCP server's prompts as a session sees them.
type weatherPrompts struct{}

func (weatherPrompts) Prompts(context.Context) ([]runtime.PromptInfo, error) {
	return []runtime.PromptInfo{{Server: "weather", Name: "forecast", Description: "Ask for a forecast",
		Arguments: []runtime.PromptArgument{{Name: "city", Required: true}, {Name: "days"}}}}, nil
}

func (weatherPrompts) GetPrompt(_ context.Context, _, _ string, args map[string]string) ([]runtime.ContentPart, error) {
	return []runtime.ContentPart{runtime.TextPart("Forecast for " + args["city"] + " over " + args["days"] + " days?")}, nil
}

// A session's MCP prompts are commands of the registry For returns;
// running one gives the turn to send to the model.
func ExampleRegistry_For() {
	ctx := context.Background()
	sess, err := runtime.New(ctx, runtime.Config{Model: "gemini-2.5-flash", Resolver: llm.NewResolver(llm.ResolverConfig{}), Prompts: weatherPrompts{}})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	reg, err := commands.New(commands.Config{})
	if err != nil {
		log.Fatal(err)
	}
	withPrompts := reg.For(ctx, sess)
	path, args, _ := withPrompts.Parse(`/forecast "New York" --days=3`)
	err = withPrompts.Run(ctx, sess, path, args, nil)
	var sub *commands.Submission
	if errors.As(err, &sub) {
		fmt.Println(sub.Message.Content[0].Text)
	}
	_ = withPrompts.Run(ctx, sess, []string{"forecast", "help"}, "", func(help string) {
		fmt.Println(strings.SplitN(help, "\n", 2)[0])
	})
	// Output:
	// Forecast for New York over 3 days?
	// Arguments for "forecast":
}
