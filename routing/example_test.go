package routing_test

import (
	"fmt"

	"google.golang.org/adk/v2/model"

	"github.com/agentry-dev/agentry/routing"
)

// One Availability shared by two sessions (a parent and its subagent, or
// the prompts of a batch): a quota failure one of them records makes the
// other skip the exhausted model at once, instead of spending a call to
// learn it again. Both use the auto-gemini-2.5 alias, whose chain falls
// back from Pro to Flash silently.
func ExampleNewAvailability() {
	shared := routing.NewAvailability()
	parent, err := routing.NewService(routing.ServiceConfig{Model: "auto-gemini-2.5", Availability: shared})
	if err != nil {
		panic(err)
	}
	child, err := routing.NewService(routing.ServiceConfig{Model: "auto-gemini-2.5", Availability: shared})
	if err != nil {
		panic(err)
	}
	req := &model.LLMRequest{Model: "gemini-2.5-pro"}
	fmt.Println("before:", child.Select(req).Model)

	// The parent's call hit a terminal quota error.
	shared.MarkTerminal("gemini-2.5-pro", routing.ReasonQuota)
	fmt.Println("parent sees:", parent.Select(&model.LLMRequest{Model: "gemini-2.5-pro"}).Model)
	fmt.Println("child sees:", child.Select(&model.LLMRequest{Model: "gemini-2.5-pro"}).Model)
	// Output:
	// before: gemini-2.5-pro
	// parent sees: gemini-2.5-flash
	// child sees: gemini-2.5-flash
}
