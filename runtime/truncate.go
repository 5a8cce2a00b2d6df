package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/agentry-dev/agentry/masking"
	"github.com/agentry-dev/agentry/tools"
)

// outputLimit is the scheduler's per-call truncation, gemini-cli's
// tool-executor truncateOutputIfNeeded: the text output of
// run_shell_command, and of tools that opt in (tools.Truncatable, for MCP
// tools), beyond threshold characters is shortened to its first 20 % and
// last 80 % of the threshold, the full text spilled to
// <temp>/tool-outputs/session-<id>/<tool>_<call id>.txt. One outputLimit
// serves all the tools of a session.
type outputLimit struct {
	threshold int // 0 or less: off
	root      string
	sessionID string
	log       *slog.Logger

	once sync.Once // creates the private root when root is ""
	dir  string
	err  error
}

func newOutputLimit(threshold int, tempDir, sessionID string, log *slog.Logger) *outputLimit {
	if threshold == 0 {
		threshold = masking.DefaultTruncateThreshold
	}
	if log == nil {
		log = slog.Default()
	}
	return &outputLimit{threshold: threshold, root: tempDir, sessionID: sessionID, log: log}
}

// spillDir returns the session's spill directory. Without a configured
// temporary directory it lies in a private directory made on first use:
// a fixed name in the shared system temp directory could be planted by
// another user.
func (l *outputLimit) spillDir() (string, error) {
	l.once.Do(func() {
		root := l.root
		if root == "" {
			if root, l.err = os.MkdirTemp("", "agentry-"); l.err != nil {
				return
			}
		}
		l.dir = masking.SessionDir(root, l.sessionID)
	})
	return l.dir, l.err
}

// applies reports whether t's output is truncated: run_shell_command's,
// as gemini-cli's, and that of tools that opt in.
func (l *outputLimit) applies(t tools.Tool) bool {
	if l == nil || l.threshold <= 0 {
		return false
	}
	if t.Name() == masking.ShellToolName {
		return true
	}
	tr, ok := t.(tools.Truncatable)
	return ok && tr.TruncatesOutput()
}

// truncate returns text as the model should see it, and the spill file
// when it was shortened.
func (l *outputLimit) truncate(t tools.Tool, callID, text string) (string, string, error) {
	if !l.applies(t) || len(text) <= l.threshold {
		// A character is at least one byte: short text needs no count.
		return text, "", nil
	}
	dir, err := l.spillDir()
	if err != nil {
		return "", "", fmt.Errorf("spill directory: %w", err)
	}
	path, err := masking.SpillPath(dir, t.Name(), callID)
	if err != nil {
		return "", "", err
	}
	out, err := masking.TruncateOutput(text, l.threshold, path)
	if err != nil || out == text {
		return out, "", err
	}
	return out, path, nil
}

// truncateResult shortens a successful call's output. A failure to save
// the full output fails the call, as it does in gemini-cli.
func (l *outputLimit) truncateResult(t tools.Tool, callID, text string, info *callInfo) (string, error) {
	out, file, err := l.truncate(t, callID, text)
	if err != nil {
		return "", &tools.Error{Type: tools.ErrExecutionFailed, Msg: fmt.Sprintf("Failed to save the full output of %s: %v", t.Name(), err), Err: err}
	}
	info.outputFile = file
	return out, nil
}

// truncateCancelled shortens the partial output a cancelled call carries
// in its error message, as gemini-cli truncates a cancelled call's
// output. If the output cannot be saved, the error is left as it is.
func (l *outputLimit) truncateCancelled(ctx context.Context, t tools.Tool, callID string, err error, info *callInfo) error {
	var te *tools.Error
	if !errors.As(err, &te) || te.Type != tools.ErrCancelled {
		return err
	}
	msg, file, terr := l.truncate(t, callID, te.Msg)
	if terr != nil {
		l.log.WarnContext(ctx, "cannot save the output of a cancelled tool call", "tool", t.Name(), "callId", callID, "err", terr)
		return err
	}
	if file == "" {
		return err
	}
	info.outputFile = file
	return &tools.Error{Type: te.Type, Msg: msg, Err: te.Err}
}
