package idecontext_test

import (
	"context"
	"fmt"

	"github.com/agentry-dev/agentry/ide/idecontext"
	"github.com/agentry-dev/agentry/ide/idewire"
)

// A session's first prompt gets the full context; after the cursor moves,
// the next prompt gets only the change; with nothing changed, nothing.
func ExampleSource() {
	ide := &fakeIDE{}
	ide.c = idewire.Context{WorkspaceState: &idewire.WorkspaceState{OpenFiles: []idewire.File{
		{Path: "/w/main.go", Timestamp: 2, IsActive: true, Cursor: &idewire.Cursor{Line: 3, Character: 1}},
		{Path: "/w/util.go", Timestamp: 1},
	}}}
	ide.n = 1
	src := idecontext.New(ide)
	ctx := context.Background()
	fmt.Println(src.PromptContext(ctx, "session-1", nil)[0].Text)

	moved := *ide.c.WorkspaceState
	moved.OpenFiles = append([]idewire.File(nil), moved.OpenFiles...)
	moved.OpenFiles[0].Cursor = &idewire.Cursor{Line: 9, Character: 4}
	ide.c, ide.n = idewire.Context{WorkspaceState: &moved}, 2
	fmt.Println(src.PromptContext(ctx, "session-1", nil)[0].Text)

	fmt.Println(len(src.PromptContext(ctx, "session-1", nil)))
	// Output:
	// Here is the user's editor context as a JSON object. This is for your information only.
	// ```json
	// {
	//   "activeFile": {
	//     "path": "/w/main.go",
	//     "cursor": {
	//       "line": 3,
	//       "character": 1
	//     }
	//   },
	//   "otherOpenFiles": [
	//     "/w/util.go"
	//   ]
	// }
	// ```
	// Here is a summary of changes in the user's editor context, in JSON format. This is for your information only.
	// ```json
	// {
	//   "changes": {
	//     "cursorMoved": {
	//       "path": "/w/main.go",
	//       "cursor": {
	//         "line": 9,
	//         "character": 4
	//       }
	//     }
	//   }
	// }
	// ```
	// 0
}
