package processors

import (
	"context"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"time"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"
)

// ContextSource supplies extra context for each model request, such as the
// state of the user's editor. Its parts are added after the session context.
type ContextSource interface {
	// Context returns the parts to add to this request, or none.
	Context(ctx agent.ReadonlyContext) ([]*genai.Part, error)
}

// ContentConfig configures the content processor.
type ContentConfig struct {
	// Roots are the workspace directories, primary first.
	Roots []string
	// TempDir is the project's temporary directory, shown to the model.
	TempDir string
	// OS is the operating system name; default runtime.GOOS.
	OS string
	// Now returns the current time; default time.Now.
	Now func() time.Time
	// MaxItems bounds the directory listing; 0 means 200, a negative value
	// leaves the listing out.
	MaxItems int
	// Memory holds the context files' text.
	Memory Memory
	// Sources supply extra context on every request.
	Sources []ContextSource
	// Ignore, when set, returns the ignore-file filter of a workspace root,
	// so the listing leaves out what the file tools would.
	Ignore func(root string) IgnoreFunc
}

// Content is the first processor of the chain. It gives the model the
// session context that gemini-cli puts at the start of every chat — the
// date, the OS, the workspace directories with a bounded listing, and the
// project's context files — at the start of the first user turn of every
// request, and appends the user's global context files to the system
// instruction. The session context is computed once per session, so every
// request of a session starts with the same bytes. It shapes the history
// as gemini-cli's chat does (see curateHistory and coalesceRoles).
type Content struct {
	cfg ContentConfig

	mu       sync.Mutex
	sessions map[string]*genai.Content
}

// NewContent returns a content processor.
func NewContent(cfg ContentConfig) *Content {
	if cfg.OS == "" {
		cfg.OS = goruntime.GOOS
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxItems == 0 {
		cfg.MaxItems = 200
	}
	return &Content{cfg: cfg, sessions: map[string]*genai.Content{}}
}

// Name implements RequestProcessor.
func (c *Content) Name() string { return "content" }

// ProcessRequest implements RequestProcessor.
func (c *Content) ProcessRequest(ctx agent.Context, req *model.LLMRequest) error {
	sessionCtx := c.sessionContext(ctx, ctx.SessionID())
	prefix := []*genai.Content{sessionCtx}
	for _, src := range c.cfg.Sources {
		parts, err := src.Context(ctx)
		if err != nil {
			return fmt.Errorf("context source: %w", err)
		}
		if len(parts) > 0 {
			prefix = append(prefix, &genai.Content{Role: genai.RoleUser, Parts: parts})
		}
	}
	// The request's contents are its own (the conversation processor
	// builds a list for each request, with room for the prefix at its end):
	// the prefix goes in front in place when the list has that room.
	history := curateHistory(req.Contents)
	var contents []*genai.Content
	if n, k := len(history), len(prefix); cap(history)-n >= k {
		contents = history[:n+k]
		copy(contents[k:], history)
		copy(contents, prefix)
	} else {
		contents = make([]*genai.Content, 0, k+n)
		contents = append(append(contents, prefix...), history...)
	}
	req.Contents = coalesceRoles(contents)
	c.mu.Lock()
	g := c.cfg.Memory.Global
	c.mu.Unlock()
	if g != "" {
		if req.Config == nil {
			req.Config = &genai.GenerateContentConfig{}
		}
		if req.Config.SystemInstruction == nil {
			req.Config.SystemInstruction = &genai.Content{Role: genai.RoleUser}
		}
		req.Config.SystemInstruction.Parts = append(req.Config.SystemInstruction.Parts, &genai.Part{Text: g})
	}
	return nil
}

// SetMemory replaces the context files' text, as after the user adds to
// their memory: the global memory of every later request is m's. The
// session context, which holds the project memory, is built again only
// if that changed, so that requests keep starting with the same bytes.
func (c *Content) SetMemory(m Memory) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.Project != c.cfg.Memory.Project {
		clear(c.sessions)
	}
	c.cfg.Memory = m
}

func (c *Content) sessionContext(ctx context.Context, sessionID string) *genai.Content {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sc, ok := c.sessions[sessionID]; ok {
		return sc
	}
	sc := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: c.render(ctx)}}}
	c.sessions[sessionID] = sc
	return sc
}

// render builds the session context text in gemini-cli's shape.
func (c *Content) render(ctx context.Context) string {
	var b strings.Builder
	b.WriteString("<session_context>\nThis is agentry. We are setting up the context for our chat.\n")
	fmt.Fprintf(&b, "Today's date is %s (formatted according to the user's locale).\n", c.cfg.Now().Format("Monday, January 2, 2006"))
	fmt.Fprintf(&b, "My operating system is: %s\n", c.cfg.OS)
	if c.cfg.TempDir != "" {
		fmt.Fprintf(&b, "The project's temporary directory is: %s\n", c.cfg.TempDir)
	}
	if c.cfg.MaxItems > 0 && len(c.cfg.Roots) > 0 {
		b.WriteString("- **Workspace Directories:**\n")
		for _, r := range c.cfg.Roots {
			fmt.Fprintf(&b, "  - %s\n", r)
		}
		b.WriteString("- **Directory Structure:**\n\n")
		for i, r := range c.cfg.Roots {
			if i > 0 {
				b.WriteByte('\n')
			}
			var ignore IgnoreFunc
			if c.cfg.Ignore != nil {
				ignore = c.cfg.Ignore(r)
			}
			b.WriteString(FolderStructure(ctx, r, c.cfg.MaxItems, ignore))
		}
		b.WriteByte('\n')
	}
	if p := c.cfg.Memory.Project; p != "" {
		b.WriteString("\n")
		b.WriteString(p)
		b.WriteByte('\n')
	}
	b.WriteString("</session_context>")
	return b.String()
}
