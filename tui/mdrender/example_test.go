package mdrender_test

import (
	"fmt"

	xansi "github.com/charmbracelet/x/ansi"

	"github.com/agentry-dev/agentry/tui/mdrender"
)

func Example() {
	r := mdrender.New(mdrender.Options{Width: 40, Style: "dark"})
	out := r.Render("## Plan\n\n1. Read **main.go**.\n2. Fix the `typo`.\n\n```\ngo test ./...\n```")
	fmt.Println(xansi.Strip(out)) // the text, without its styles
	// Output:
	//   ## Plan
	//
	//   1. Read main.go.
	//   2. Fix the typo.
	//
	//     go test ./...
}
