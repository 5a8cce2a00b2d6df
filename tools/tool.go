// Package tools holds agentry's built-in tools: file reading and editing,
// directory listing, glob and grep search, and shell commands. A tool knows
// its declaration and how to execute one call inside the workspace; it does
// not know about ADK, approval or the protocol. The runtime's scheduler
// wraps each tool, decides whether a call may run, streams its live output
// and turns its Result into a function response.
package tools

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/genai"
)

// Kind classifies what a tool does. Approval policy keys on it: read and
// search tools run freely, edits need auto_edit or yolo, execute needs yolo
// or an explicit allow rule. The values are gemini-cli's tool kinds.
type Kind string

// Tool kinds, with gemini-cli's spelling.
const (
	KindRead    Kind = "read"
	KindEdit    Kind = "edit"
	KindDelete  Kind = "delete"
	KindMove    Kind = "move"
	KindSearch  Kind = "search"
	KindExecute Kind = "execute"
	KindThink   Kind = "think"
	KindFetch   Kind = "fetch"
	KindOther   Kind = "other"
	// KindAgent is a call handing a task to a subagent, whose own tool
	// calls go through their own approvals.
	KindAgent Kind = "agent"
)

// ReadOnly reports whether tools of this kind leave the workspace unchanged.
func (k Kind) ReadOnly() bool {
	switch k {
	case KindRead, KindSearch, KindThink:
		return true
	}
	return false
}

// Tool is one built-in tool.
type Tool interface {
	// Name is the function name the model calls, e.g. "read_file".
	Name() string
	// DisplayName is a short human name, e.g. "ReadFile".
	DisplayName() string
	// Kind classifies the tool for approval policy.
	Kind() Kind
	// Declaration is the function declaration sent to the model. Callers
	// must not modify it.
	Declaration() *genai.FunctionDeclaration
	// Describe returns a one-line description of what a call with these
	// arguments will do (e.g. the command line or the file path), for
	// progress display and approval prompts. It must not fail: bad arguments
	// are reported by Execute.
	Describe(args map[string]any) string
	// Execute runs one call. It honours ctx: when ctx is cancelled it stops
	// promptly (a shell command's whole process group is killed) and returns
	// an error wrapping context.Cause(ctx). A failure the model should see is
	// returned as *Error.
	Execute(ctx context.Context, call Call) (Result, error)
}

// Truncatable is implemented by tools whose text output the scheduler may
// truncate, as gemini-cli truncates MCP tools that return one text part:
// beyond the session's threshold the model gets the output's head and tail
// and the full text is saved to a file. run_shell_command is truncated
// whether or not it implements it.
type Truncatable interface {
	// TruncatesOutput reports whether the tool's output may be truncated.
	TruncatesOutput() bool
}

// Call is one invocation of a tool.
type Call struct {
	// ID is the function call id; it correlates live output and results.
	ID string
	// Args are the model's arguments, as decoded from JSON.
	Args map[string]any
	// Output, when non-nil, receives live output while the call runs (a
	// shell command's stdout and stderr as they are produced). It is called
	// from the executing goroutine and must not block for long.
	Output func(chunk string)
}

// Result is what a successful call produced.
type Result struct {
	// LLMContent is the text the model receives as the call's output.
	LLMContent string
	// Display is what terminals and UIs show of the result, gemini-cli's
	// returnDisplay: often a short summary, a command's output for the
	// shell, empty for a whole file read.
	Display string
	// Summary is a few words on the result, such as "3 lines" (gemini-cli's
	// display.resultSummary).
	Summary string
	// Diff, for edits, is the change made to one file.
	Diff *FileDiff
	// Data holds structured details for drivers (exit code, stdout, stderr,
	// match counts); it is not sent to the model.
	Data map[string]any
}

// FileDiff describes an edit of one file.
type FileDiff struct {
	// Path is the absolute path of the file.
	Path string
	// Before is the content before the edit ("" for a new file).
	Before string
	// After is the content after the edit.
	After string
	// LinesAdded and LinesRemoved count changed lines, from a line diff.
	LinesAdded, LinesRemoved int
}

// ErrorType names a class of tool failure, with gemini-cli's ToolErrorType
// spelling. Drivers show it (stream-json's tool_result error type) and
// policy keys on some of them (NO_SPACE_LEFT is fatal to a batch run).
type ErrorType string

// Tool error types used by agentry's built-in tools and its scheduler.
const (
	ErrInvalidParams       ErrorType = "invalid_tool_params"
	ErrUnknown             ErrorType = "unknown"
	ErrToolNotRegistered   ErrorType = "tool_not_registered"
	ErrExecutionFailed     ErrorType = "execution_failed"
	ErrPathNotInWorkspace  ErrorType = "path_not_in_workspace"
	ErrFileNotFound        ErrorType = "file_not_found"
	ErrFileWriteFailure    ErrorType = "file_write_failure"
	ErrReadContentFailure  ErrorType = "read_content_failure"
	ErrTargetIsDirectory   ErrorType = "target_is_directory"
	ErrFileTooLarge        ErrorType = "file_too_large"
	ErrPathIsNotDirectory  ErrorType = "path_is_not_a_directory"
	ErrEditNoOccurrence    ErrorType = "edit_no_occurrence_found"
	ErrEditMultipleMatches ErrorType = "edit_expected_occurrence_mismatch"
	ErrEditNoChange        ErrorType = "edit_no_change"
	ErrGlobExecution       ErrorType = "glob_execution_error"
	ErrGrepExecution       ErrorType = "grep_execution_error"
	ErrShellExecute        ErrorType = "shell_execute_error"
	ErrNoSpaceLeft         ErrorType = "no_space_left"
	ErrPolicyViolation     ErrorType = "policy_violation"
	ErrPermissionDenied    ErrorType = "permission_denied"
	ErrCreateExisting      ErrorType = "attempt_to_create_existing_file"
	ErrSearchPathNotFound  ErrorType = "search_path_not_found"
	ErrSearchPathNotDir    ErrorType = "search_path_not_a_directory"
	ErrLsExecution         ErrorType = "ls_execution_error"
	ErrReadManyFiles       ErrorType = "read_many_files_search_error"
	ErrStopExecution       ErrorType = "stop_execution"
	ErrMCPResourceNotFound ErrorType = "mcp_resource_not_found"
	ErrMCPToolError        ErrorType = "mcp_tool_error"
	// ErrCancelled is agentry's type for a call stopped by an abort; gemini-cli
	// reports those as cancelled calls rather than errors.
	ErrCancelled ErrorType = "cancelled"
)

// Fatal reports whether an error of this type should end a batch run rather
// than be returned to the model (gemini-cli's isFatalToolError).
func (t ErrorType) Fatal() bool { return t == ErrNoSpaceLeft }

// Error is a tool failure the model should see. Its message is what the
// model reads, so it says what went wrong and what to do instead.
type Error struct {
	Type ErrorType
	Msg  string
	// Display, when set, is the short summary users see instead of Msg
	// (gemini-cli's returnDisplay of a failed call, e.g. "File not found.").
	Display string
	Err     error // optional cause
}

// Errorf returns an *Error of type t with a formatted message.
func Errorf(t ErrorType, format string, args ...any) *Error {
	return &Error{Type: t, Msg: fmt.Sprintf(format, args...)}
}

// Error returns the message the model reads.
func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// DisplayOf returns the display summary of err: its *Error's Display, or
// "" when it has none (users then see the message).
func DisplayOf(err error) string {
	var te *Error
	if errors.As(err, &te) {
		return te.Display
	}
	return ""
}

// TypeOf returns the ErrorType of err: the type of the first *Error in its
// chain, ErrCancelled for a cancelled context, else ErrUnknown.
func TypeOf(err error) ErrorType {
	var te *Error
	if errors.As(err, &te) {
		return te.Type
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return ErrCancelled
	}
	return ErrUnknown
}

// Previewer is implemented by edit tools that can show the change a call
// would make before it runs, for approval prompts (gemini-cli's
// ToolEditConfirmationDetails).
type Previewer interface {
	// Preview validates the call as Execute would and returns its change
	// without making it.
	Preview(args map[string]any) (*FileDiff, error)
}
