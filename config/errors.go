package config

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Load's errors match one of them with errors.Is, so that
// the CLI can choose its exit code without parsing messages.
var (
	// ErrInvalid marks a setting that cannot be used: bad JSON, an unknown
	// key, a value of the wrong type or out of range, in a settings file, an
	// AGENTRY_* variable, a flag or a .env file. The CLI exits with 52.
	ErrInvalid = errors.New("invalid settings")
	// ErrUntrustedWorkspace marks a workspace settings file that tries to
	// raise permissions or redirect credentials while the workspace is not
	// trusted. The CLI exits with 55.
	ErrUntrustedWorkspace = errors.New("untrusted workspace")
)

// Error describes one invalid setting and where it came from. Exactly one
// of File, Env and Flag names the source. It matches ErrInvalid.
type Error struct {
	// File is the settings or .env file holding the value.
	File string
	// Line and Column locate a JSON syntax error in File (1-based).
	Line, Column int
	// Env is the environment variable holding the value.
	Env string
	// Flag is the command-line flag (without dashes) holding the value.
	Flag string
	// Key is the dotted settings key, e.g. "model.maxSessionTurns", or ""
	// when the problem is not about one key (bad JSON, AGENTRY_TRUST_WORKSPACE).
	Key string
	// Expected says what the value must be, e.g. "an integer". When it is
	// empty, Msg says what is wrong.
	Expected string
	// Got describes what was found: the JSON type or value for a file, the
	// raw text for a variable or a flag.
	Got string
	// Msg describes the problem when it is not a type or range mismatch.
	Msg string
	// Err is the underlying error, if any (a JSON syntax error, an I/O
	// error).
	Err error
}

// Error formats the source first, so that the message reads like a compiler
// diagnostic: "file: problem", "VAR=value: problem", "--flag=value: problem".
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "":
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
		}
	case e.Env != "" && e.Got == "":
		// A variable named without its value: the value of a misspelt
		// variable may be a secret.
		b.WriteString(e.Env)
	case e.Env != "":
		fmt.Fprintf(&b, "%s=%q", e.Env, e.Got)
	case e.Flag != "":
		fmt.Fprintf(&b, "--%s=%q", e.Flag, e.Got)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	switch {
	case e.Expected != "" && e.File != "":
		fmt.Fprintf(&b, "%q must be %s, got %s", e.Key, e.Expected, e.Got)
	case e.Expected != "":
		// The raw value is already in the prefix.
		fmt.Fprintf(&b, "%s must be %s", e.Key, e.Expected)
	default:
		b.WriteString(e.Msg)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Is reports whether target is ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// UntrustedWorkspaceError reports a workspace settings file that asks for
// more than an untrusted workspace may have. It matches
// ErrUntrustedWorkspace.
type UntrustedWorkspaceError struct {
	// File is the workspace settings file.
	File string
	// Workspace is the untrusted workspace directory.
	Workspace string
	// Keys are the offending settings, e.g. "general.defaultApprovalMode=yolo".
	Keys []string
	// UserSettings is the user settings file where the workspace can be
	// added to security.trustedFolders.
	UserSettings string
}

// Error names the file, the keys and the three ways to trust the workspace,
// since the user has to act on it.
func (e *UntrustedWorkspaceError) Error() string {
	return fmt.Sprintf("%s sets %s, which only a trusted workspace may set, but workspace %s is not trusted; "+
		"trust it with --trust-workspace, with AGENTRY_TRUST_WORKSPACE=true, "+
		"or by adding it to security.trustedFolders in %s",
		e.File, strings.Join(e.Keys, ", "), e.Workspace, e.UserSettings)
}

// Is reports whether target is ErrUntrustedWorkspace.
func (e *UntrustedWorkspaceError) Is(target error) bool { return target == ErrUntrustedWorkspace }
