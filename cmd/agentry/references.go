package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentry-dev/agentry/atpath"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/tools"
)

// expandReferences expands the prompt's @path references (see package
// atpath) against the workspace roots and returns the text parts to send.
// A reference to nothing in the workspace, or to a path outside it, is the
// user's input to fix: exit code 42.
func expandReferences(ctx context.Context, s *config.Settings, input string, warn func(string)) ([]string, error) {
	if !strings.Contains(input, "@") {
		return []string{input}, nil
	}
	ws, err := tools.NewWorkspace(s.Workspace, s.Context.IncludeDirectories...)
	if err != nil {
		return nil, err
	}
	res, err := atpath.Expand(ctx, ws, input)
	var ref *atpath.RefError
	if errors.As(err, &ref) {
		return nil, &inputError{ref.Error()}
	}
	if err != nil {
		return nil, fmt.Errorf("expanding @ references: %w", err)
	}
	if len(res.Ignored) > 0 {
		warn(fmt.Sprintf("not read, the ignore files (.gitignore, .geminiignore, .agentryignore) exclude them: %s", strings.Join(res.Ignored, ", ")))
	}
	return res.Parts, nil
}
