package runtime

import (
	"context"
	"errors"

	"github.com/agentry-dev/agentry/runtime/llm"
)

// Exit codes, gemini-cli's: drivers that exit on a stream's failure use the
// code carried in the error event's _meta.exitCode.
const (
	ExitOK        = 0
	ExitGeneric   = 1
	ExitAuth      = 41
	ExitInput     = 42
	ExitSandbox   = 44
	ExitConfig    = 52
	ExitTurnLimit = 53
	ExitFatalTool = 54
	ExitUntrusted = 55
	ExitCancelled = 130
)

// google.rpc.Code names used in error events.
const (
	statusInternal      = "INTERNAL"
	statusInvalidArg    = "INVALID_ARGUMENT"
	statusUnauth        = "UNAUTHENTICATED"
	statusExhausted     = "RESOURCE_EXHAUSTED"
	statusCancelled     = "CANCELLED"
	statusFailedPrecond = "FAILED_PRECONDITION"
)

// errorClass is how one kind of error appears on the wire: its
// google.rpc.Code name, the gemini-cli error class name drivers key on, and
// the process exit code.
type errorClass struct {
	target   error
	status   string
	name     string
	exitCode int
}

// errorClasses is the one table mapping agentry's sentinel errors to wire
// codes. The first match wins.
var errorClasses = []errorClass{
	{llm.ErrNoCredentials, statusUnauth, "FatalAuthenticationError", ExitAuth},
	{llm.ErrUnknownModel, statusInvalidArg, "FatalConfigError", ExitConfig},
	{ErrSetup, statusInvalidArg, "FatalConfigError", ExitConfig},
	{llm.ErrBadReplayFile, statusInvalidArg, "FatalConfigError", ExitConfig},
	{llm.ErrReplayExhausted, statusFailedPrecond, "ReplayExhaustedError", ExitGeneric},
	{llm.ErrReplayMismatch, statusFailedPrecond, "ReplayMismatchError", ExitGeneric},
	{ErrMaxTurns, statusExhausted, "FatalTurnLimitedError", ExitTurnLimit},
	{ErrAborted, statusCancelled, "FatalCancellationError", ExitCancelled},
	{context.Canceled, statusCancelled, "FatalCancellationError", ExitCancelled},
}

// ErrorStatus returns the google.rpc.Code name, error class name and exit
// code for err.
func ErrorStatus(err error) (status, name string, exitCode int) {
	var fatal *FatalToolError
	if errors.As(err, &fatal) {
		return statusInternal, "FatalToolExecutionError", ExitFatalTool
	}
	for _, c := range errorClasses {
		if errors.Is(err, c.target) {
			return c.status, c.name, c.exitCode
		}
	}
	if code, ok := llm.HTTPStatus(err); ok {
		return httpToStatus(code), "ApiError", ExitGeneric
	}
	return statusInternal, "Error", ExitGeneric
}

// httpToStatus maps an HTTP status to a google.rpc.Code name, as gemini-cli's
// event translator does.
func httpToStatus(code int) string {
	switch code {
	case 400:
		return statusInvalidArg
	case 401:
		return statusUnauth
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 409:
		return "ALREADY_EXISTS"
	case 429:
		return statusExhausted
	case 501:
		return "UNIMPLEMENTED"
	case 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	return statusInternal
}

// errorEvent is the fatal error event for a failed stream.
func errorEvent(err error) Event {
	status, name, exitCode := ErrorStatus(err)
	meta := map[string]any{"errorName": name, "exitCode": exitCode}
	if code, ok := llm.HTTPStatus(err); ok {
		meta["status"] = code
	}
	return Event{Type: EventError, Meta: meta, Error: &ErrorData{Status: status, Message: err.Error(), Fatal: true}}
}
