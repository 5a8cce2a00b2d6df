package runtime

import (
	"context"
	"errors"
)

// ErrNoPrompts reports a prompt asked of a session that has no MCP
// prompts.
var ErrNoPrompts = errors.New("the session has no MCP prompts")

// PromptInfo describes a prompt an MCP server offers the session: what a
// slash command made of it shows and needs.
type PromptInfo struct {
	// Server is the configured name of the MCP server.
	Server string
	// Name is the prompt's name on its server.
	Name        string
	Description string
	// Arguments are the prompt's arguments in the order it declares them.
	Arguments []PromptArgument
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string
	Description string
	Required    bool
}

// PromptSource is where a session's MCP prompts come from: compose gives
// the session its MCP manager's.
type PromptSource interface {
	// Prompts lists the prompts of the servers that can be reached, in a
	// stable order (by server, then as the server lists them); err
	// reports the servers that cannot.
	Prompts(ctx context.Context) ([]PromptInfo, error)
	// GetPrompt asks server for its prompt name with args and returns
	// its messages' content as the parts of one user turn.
	GetPrompt(ctx context.Context, server, name string, args map[string]string) ([]ContentPart, error)
}

// Prompts lists the session's MCP prompts (none without a PromptSource).
func (s *Session) Prompts(ctx context.Context) ([]PromptInfo, error) {
	if s.cfg.prompts == nil {
		return nil, nil
	}
	return s.cfg.prompts.Prompts(ctx)
}

// GetPrompt asks an MCP server for a prompt's content with args.
func (s *Session) GetPrompt(ctx context.Context, server, name string, args map[string]string) ([]ContentPart, error) {
	if s.cfg.prompts == nil {
		return nil, ErrNoPrompts
	}
	return s.cfg.prompts.GetPrompt(ctx, server, name, args)
}
