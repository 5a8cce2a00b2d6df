package compose

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentry-dev/agentry/mcptools"
	"github.com/agentry-dev/agentry/runtime"
)

// mcpPrompts is a session's MCP prompts (runtime.PromptSource) from its
// MCP manager.
type mcpPrompts struct{ m *mcptools.Manager }

// newMCPPrompts returns m's prompts as the session's, listed once now so
// that the first slash command, completion or /help finds them without
// waiting for the servers (gemini-cli lists them when it connects).
func newMCPPrompts(ctx context.Context, m *mcptools.Manager, log *slog.Logger) runtime.PromptSource {
	p := mcpPrompts{m}
	if _, err := p.Prompts(ctx); err != nil {
		log.Debug("MCP prompts not listed", "err", err)
	}
	return p
}

// Prompts lists the servers' prompts.
func (p mcpPrompts) Prompts(ctx context.Context) ([]runtime.PromptInfo, error) {
	list, errs := p.m.Prompts(ctx)
	out := make([]runtime.PromptInfo, 0, len(list))
	for _, pr := range list {
		info := runtime.PromptInfo{Server: pr.Server, Name: pr.Name, Description: pr.Description}
		for _, a := range pr.Arguments {
			if a == nil {
				continue
			}
			info.Arguments = append(info.Arguments, runtime.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
		}
		out = append(out, info)
	}
	return out, errors.Join(errs...)
}

// GetPrompt gets a prompt and returns its messages' content, in order, as
// the parts of one user turn.
func (p mcpPrompts) GetPrompt(ctx context.Context, server, name string, args map[string]string) ([]runtime.ContentPart, error) {
	res, err := p.m.GetPrompt(ctx, server, name, args)
	if err != nil {
		return nil, err
	}
	var parts []runtime.ContentPart
	for _, msg := range res.Messages {
		if msg == nil || msg.Content == nil {
			continue
		}
		parts = append(parts, promptPart(msg.Content))
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("mcp server %q: prompt %q: %w", server, name, errEmptyPrompt)
	}
	return parts, nil
}

// errEmptyPrompt reports a prompt whose messages have no content.
var errEmptyPrompt = errors.New("Received an empty or invalid prompt response from the server.")

// promptPart is one prompt message's content as a part the model gets:
// text as text, an embedded text resource as its text, images, audio and
// embedded blobs as inline data, a resource link as a line naming it.
func promptPart(c mcp.Content) runtime.ContentPart {
	media := func(data []byte, mime string) runtime.ContentPart {
		if mime == "" {
			mime = "application/octet-stream"
		}
		return runtime.ContentPart{Type: runtime.PartMedia, Data: base64.StdEncoding.EncodeToString(data), MimeType: mime}
	}
	switch c := c.(type) {
	case *mcp.TextContent:
		return runtime.TextPart(c.Text)
	case *mcp.ImageContent:
		return media(c.Data, c.MIMEType)
	case *mcp.AudioContent:
		return media(c.Data, c.MIMEType)
	case *mcp.EmbeddedResource:
		switch r := c.Resource; {
		case r == nil:
			return runtime.TextPart("[empty resource]")
		case r.Blob != nil:
			return media(r.Blob, r.MIMEType)
		default:
			return runtime.TextPart(r.Text)
		}
	case *mcp.ResourceLink:
		title := c.Title
		if title == "" {
			title = c.Name
		}
		return runtime.TextPart(fmt.Sprintf("Resource Link: %s at %s", title, c.URI))
	default:
		return runtime.TextPart(fmt.Sprintf("[unsupported content %T]", c))
	}
}
