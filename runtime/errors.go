package runtime

import (
	"context"
	"errors"

	"github.com/agentry-dev/agentry/runtime/llm"
)

// Exit codes, gemini-cli's, documented in the README; the one place they
// are defined. Drivers that exit on a stream's failure use the code
// carried in the error event's _meta.exitCode.
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
	// ExitStorage is agentry's own: its files (the session store, a
	// transcript) cannot be written — a full disk, a read-only file system.
	ExitStorage   = 56
	ExitCancelled = 130
)

// What drivers print for a stream that ended without an error event,
// gemini-cli's words.
const (
	// TurnLimitMessage reports a stream stopped at model.maxSessionTurns
	// (agent_end max_turns; exit ExitTurnLimit).
	TurnLimitMessage = "Reached max session turns for this session. Increase the number of turns by specifying model.maxSessionTurns in settings.json."
	// CancelledMessage reports an aborted stream (agent_end aborted; exit
	// ExitCancelled).
	CancelledMessage = "Operation cancelled."
)

// google.rpc.Code names of the error events of agentry's sessions and
// agents (ErrorData.Status).
const (
	// StatusInternal: an internal failure.
	StatusInternal = "INTERNAL"
	// StatusInvalidArgument: bad input (a settings value, a request).
	StatusInvalidArgument = "INVALID_ARGUMENT"
	// StatusUnauthenticated: missing or refused credentials.
	StatusUnauthenticated = "UNAUTHENTICATED"
	// StatusResourceExhausted: a quota.
	StatusResourceExhausted = "RESOURCE_EXHAUSTED"
	// StatusCancelled: an aborted stream.
	StatusCancelled = "CANCELLED"
	// StatusFailedPrecondition: a state that does not allow the operation.
	StatusFailedPrecondition = "FAILED_PRECONDITION"
)

// errorClass is how one kind of error appears on the wire: its
// google.rpc.Code name, the gemini-cli error class name drivers key on, and
// the process exit code.
type errorClass struct {
	match    func(error) bool
	status   string
	name     string
	exitCode int
}

// is matches a sentinel error.
func is(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

// as matches an error type.
func as[T error]() func(error) bool {
	return func(err error) bool {
		var t T
		return errors.As(err, &t)
	}
}

// errorClasses is the one table mapping agentry's errors to wire codes.
// The first match wins; an empty status is taken from the error's HTTP
// status (a 503 that outlived its retries stays UNAVAILABLE). Model quota errors keep gemini-cli's class names
// and its text-mode exit code, 1.
var errorClasses = []errorClass{
	{as[*FatalToolError](), StatusInternal, "FatalToolExecutionError", ExitFatalTool},
	{is(llm.ErrNoCredentials), StatusUnauthenticated, "FatalAuthenticationError", ExitAuth},
	{is(llm.ErrUnknownModel), StatusInvalidArgument, "FatalConfigError", ExitConfig},
	{is(ErrStorage), StatusInternal, "FatalStorageError", ExitStorage},
	{is(ErrSetup), StatusInvalidArgument, "FatalConfigError", ExitConfig},
	{is(ErrNoSession), StatusInvalidArgument, "FatalInputError", ExitInput},
	{is(ErrNoMessage), StatusInvalidArgument, "FatalInputError", ExitInput},
	{is(ErrUnknownAgent), StatusInvalidArgument, "FatalInputError", ExitInput},
	{is(ErrBusy), StatusFailedPrecondition, "SessionBusyError", ExitGeneric},
	{is(llm.ErrBadReplayFile), StatusInvalidArgument, "FatalConfigError", ExitConfig},
	{is(llm.ErrReplayExhausted), StatusFailedPrecondition, "ReplayExhaustedError", ExitGeneric},
	{is(llm.ErrReplayMismatch), StatusFailedPrecondition, "ReplayMismatchError", ExitGeneric},
	{is(ErrMaxTurns), StatusResourceExhausted, "FatalTurnLimitedError", ExitTurnLimit},
	{is(ErrLoopDetected), StatusInternal, "LoopDetectedError", ExitOK},
	{is(ErrAborted), StatusCancelled, "FatalCancellationError", ExitCancelled},
	{is(context.Canceled), StatusCancelled, "FatalCancellationError", ExitCancelled},
	{as[*llm.TerminalQuotaError](), "", "TerminalQuotaError", ExitGeneric},
	{as[*llm.RetryableQuotaError](), "", "RetryableQuotaError", ExitGeneric},
	{as[*llm.ModelNotFoundError](), "NOT_FOUND", "ModelNotFoundError", ExitGeneric},
	{as[*llm.ValidationRequiredError](), "PERMISSION_DENIED", "ValidationRequiredError", ExitGeneric},
	{as[*llm.InvalidStreamError](), StatusInternal, "InvalidStreamError", ExitGeneric},
}

// ErrorStatus returns the google.rpc.Code name, error class name and exit
// code for err.
func ErrorStatus(err error) (status, name string, exitCode int) {
	for _, c := range errorClasses {
		if c.match(err) {
			status = c.status
			if status == "" {
				status = StatusResourceExhausted
				if code, ok := llm.HTTPStatus(err); ok {
					status = httpToStatus(code)
				}
			}
			return status, c.name, c.exitCode
		}
	}
	if code, ok := llm.HTTPStatus(err); ok {
		return httpToStatus(code), "ApiError", ExitGeneric
	}
	return StatusInternal, "Error", ExitGeneric
}

// httpToStatus maps an HTTP status to a google.rpc.Code name, as gemini-cli's
// event translator does.
func httpToStatus(code int) string {
	switch code {
	case 400:
		return StatusInvalidArgument
	case 401:
		return StatusUnauthenticated
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 409:
		return "ALREADY_EXISTS"
	case 429:
		return StatusResourceExhausted
	case 501:
		return "UNIMPLEMENTED"
	case 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	return StatusInternal
}

// errorEvent is the fatal error event for a failed stream.
func errorEvent(err error) Event {
	status, name, exitCode := ErrorStatus(err)
	meta := map[string]any{"errorName": name, "exitCode": exitCode}
	if code, ok := llm.HTTPStatus(err); ok {
		meta["status"] = code
	}
	var inv *llm.InvalidStreamError
	if errors.As(err, &inv) {
		// gemini-cli's InvalidStream event: drivers word it by its kind.
		meta["code"], meta["errorType"], meta["rawMessage"] = "INVALID_STREAM", inv.Type, inv.Message
	}
	return Event{Type: EventError, Meta: meta, Error: &ErrorData{Status: status, Message: err.Error(), Fatal: true}}
}

// ErrUnknownAgent reports an agent name no definition gives.
var ErrUnknownAgent = errors.New("unknown agent")
