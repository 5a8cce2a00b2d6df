// Package idewire holds the wire of gemini-cli's IDE companion contract
// (docs/ide.md): the discovery file a companion writes, the MCP
// notifications it sends (ide/contextUpdate, ide/diffAccepted,
// ide/diffRejected) and the arguments of the tools it serves (openDiff,
// closeDiff). agentry's CLI side (package ide) and its companion (package
// ide/companion) both speak it; it holds types and names only.
package idewire

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
)

// MCP names of the contract.
const (
	// MCPPath is the companion's one MCP endpoint (streamable HTTP).
	MCPPath = "/mcp"
	// ToolOpenDiff opens a modifiable diff view of a file.
	ToolOpenDiff = "openDiff"
	// ToolCloseDiff closes a file's diff view and returns its content.
	ToolCloseDiff = "closeDiff"
	// NotifyContextUpdate carries an IdeContext.
	NotifyContextUpdate = "ide/contextUpdate"
	// NotifyDiffAccepted carries a DiffAccepted.
	NotifyDiffAccepted = "ide/diffAccepted"
	// NotifyDiffRejected carries a DiffRejected.
	NotifyDiffRejected = "ide/diffRejected"
	// NotifyDiffClosed is the older name of NotifyDiffRejected, still
	// accepted from companions.
	NotifyDiffClosed = "ide/diffClosed"
)

// Environment variables of the contract, set by a companion in its
// integrated terminals.
const (
	// EnvServerPort breaks ties between companions of one workspace.
	EnvServerPort = "GEMINI_CLI_IDE_SERVER_PORT"
	// EnvWorkspacePath is the workspace when no discovery file names one.
	EnvWorkspacePath = "GEMINI_CLI_IDE_WORKSPACE_PATH"
	// EnvAuthToken is the token when the discovery file has none.
	EnvAuthToken = "GEMINI_CLI_IDE_AUTH_TOKEN"
	// EnvIDEPID names the IDE's process, overriding the process-tree walk.
	EnvIDEPID = "GEMINI_CLI_IDE_PID"
)

// Discovery is the discovery file's content.
type Discovery struct {
	// Port is the companion's MCP server port on 127.0.0.1.
	Port int `json:"port"`
	// WorkspacePath lists the open workspace roots, joined with the OS's
	// path list separator; "" means no folder is open.
	WorkspacePath string `json:"workspacePath"`
	// AuthToken is the bearer token every request must carry.
	AuthToken string `json:"authToken,omitempty"`
	// IDEInfo names the IDE, when the companion says.
	IDEInfo *IDEInfo `json:"ideInfo,omitempty"`
}

// IDEInfo names an IDE.
type IDEInfo struct {
	Name        string `json:"name"`
	DisplayName string `json:"displayName"`
}

// Dir is the directory of discovery files: os.TempDir()/gemini/ide.
func Dir() string { return filepath.Join(os.TempDir(), "gemini", "ide") }

// FileName is a discovery file's name for the IDE's pid and the port.
func FileName(idePID, port int) string {
	return fmt.Sprintf("gemini-ide-server-%d-%d.json", idePID, port)
}

var fileRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^gemini-ide-server-(\d+)-(\d+)\.json$`) })

// ParseFileName returns the IDE pid and port a discovery file's name
// holds; ok is false for any other name.
func ParseFileName(name string) (idePID, port int, ok bool) {
	m := fileRE().FindStringSubmatch(name)
	if m == nil {
		return 0, 0, false
	}
	pid, err1 := strconv.Atoi(m[1])
	p, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return pid, p, true
}

// Context is an IdeContext, ide/contextUpdate's params.
type Context struct {
	WorkspaceState *WorkspaceState `json:"workspaceState,omitempty"`
}

// WorkspaceState is the editor's state.
type WorkspaceState struct {
	OpenFiles []File `json:"openFiles,omitempty"`
	// IsTrusted is the IDE's own trust of the workspace.
	IsTrusted *bool `json:"isTrusted,omitempty"`
}

// File is an open file.
type File struct {
	// Path is absolute.
	Path string `json:"path"`
	// Timestamp is when it was last focused, Unix milliseconds.
	Timestamp int64 `json:"timestamp"`
	// IsActive marks the focused file.
	IsActive bool `json:"isActive,omitempty"`
	// Cursor is the active file's cursor.
	Cursor *Cursor `json:"cursor,omitempty"`
	// SelectedText is the active file's selection.
	SelectedText string `json:"selectedText,omitempty"`
}

// Cursor is a 1-based position.
type Cursor struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// OpenDiffArgs are openDiff's arguments.
type OpenDiffArgs struct {
	FilePath   string `json:"filePath"`
	NewContent string `json:"newContent"`
}

// CloseDiffArgs are closeDiff's arguments. SuppressNotification asks the
// companion not to send ide/diffRejected for the view it closes.
type CloseDiffArgs struct {
	FilePath             string `json:"filePath"`
	SuppressNotification bool   `json:"suppressNotification,omitempty"`
}

// DiffAccepted is ide/diffAccepted's params: the file's content as the
// user accepted it, which may differ from the proposal.
type DiffAccepted struct {
	FilePath string `json:"filePath"`
	Content  string `json:"content"`
}

// DiffRejected is ide/diffRejected's params.
type DiffRejected struct {
	FilePath string `json:"filePath"`
}

// CloseDiffResult is the JSON text of closeDiff's result, as gemini-cli's
// VS Code companion writes it: the view's content when it closed (nil
// when no view was open for the file).
type CloseDiffResult struct {
	Content *string `json:"content"`
}
