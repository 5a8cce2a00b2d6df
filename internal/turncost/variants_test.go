package turncost

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/compose/routes"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/internal/modeltest"
	"github.com/agentry-dev/agentry/loopdetect"
	"github.com/agentry-dev/agentry/masking"
	"github.com/agentry-dev/agentry/processors"
	"github.com/agentry-dev/agentry/routing"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/sessions"
	"github.com/agentry-dev/agentry/tools"
)

// The variants, in the order the benchmark reports them.
const (
	bareADK       = "adk"
	agentryMemory = "mem"
	agentrySQLite = "sqlite"
)

var variantNames = []string{bareADK, agentryMemory, agentrySQLite}

// variant is one way of running the same turn over the same history.
type variant struct {
	name string
	// events is the history every turn starts from.
	events []*session.Event
	// reset puts the stored session back to events.
	reset func(ctx context.Context) error
	// run runs one turn as a driver would, consuming every event.
	run   func(ctx context.Context) error
	model *script
	tool  *int // the tool's call count
}

// newVariant builds the variant called name over events; it is closed
// with tb.
func newVariant(tb testing.TB, name string, events []*session.Event) *variant {
	tb.Helper()
	var v *variant
	var err error
	switch name {
	case bareADK:
		v, err = newBareADK(events)
	case agentryMemory, agentrySQLite:
		v, err = newAgentry(tb, name, events)
	default:
		err = fmt.Errorf("no variant %q", name)
	}
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return v
}

// turn runs one turn on the stored session as it is (reset puts the
// history back) and checks that the turn was the one measured: two model
// calls, one tool call, and a first request holding the whole history and
// the prompt.
func (v *variant) turn(ctx context.Context) error { return v.turnAfter(ctx, 0) }

// turnAfter is turn on a history that earlier turns since the reset have
// grown: each added four contents (prompt, call, response, answer).
func (v *variant) turnAfter(ctx context.Context, earlier int) error {
	calls, toolCalls := v.model.calls, *v.tool
	if err := v.run(ctx); err != nil {
		return fmt.Errorf("%s: %w", v.name, err)
	}
	if got := v.model.calls - calls; got != 2 {
		return fmt.Errorf("%s: %d model calls in a turn, want 2", v.name, got)
	}
	if got := *v.tool - toolCalls; got != 1 {
		return fmt.Errorf("%s: %d tool calls in a turn, want 1", v.name, got)
	}
	if want := len(v.events) + 4*earlier + 1; v.model.firstLen != want {
		return fmt.Errorf("%s: the turn's first request held %d contents, want %d (the history and the prompt)", v.name, v.model.firstLen, want)
	}
	return nil
}

// newBareADK is the framework floor: an ADK runner over an llmagent with
// the scripted model, the function tool and ADK's in-memory session
// service, with agentry's system prompt, agent name and description.
func newBareADK(events []*session.Event) (*variant, error) {
	v := &variant{name: bareADK, events: events, tool: new(int)}
	m := &adkModel{}
	v.model = &m.script
	t, _, err := newADKTool(v.tool)
	if err != nil {
		return nil, err
	}
	ag, err := llmagent.New(llmagent.Config{
		Name:        agentName,
		Description: description,
		Model:       m,
		// As agentry gives it: a provider, not Instruction, whose
		// {placeholders} ADK would fill from the state.
		InstructionProvider: func(agent.ReadonlyContext) (string, error) { return runtime.SystemPrompt, nil },
		Tools:               []tool.Tool{t},
	})
	if err != nil {
		return nil, err
	}
	svc := session.InMemoryService()
	r, err := runner.New(runner.Config{AppName: appName, Agent: ag, SessionService: svc, AutoCreateSession: true})
	if err != nil {
		return nil, err
	}
	v.reset = func(ctx context.Context) error { return resetInMemory(ctx, svc, events) }
	v.run = func(ctx context.Context) error {
		msg := genai.NewContentFromText(prompt, genai.RoleUser)
		for _, err := range r.Run(ctx, userID, sessionID, msg, agent.RunConfig{StreamingMode: agent.StreamingModeSSE}) {
			if err != nil {
				return err
			}
		}
		return nil
	}
	return v, nil
}

// newAgentry is an agentry session as compose.FromSettings builds one
// from the default settings, but with the trivial tool alone and without
// a transcript: the processor chain (content, masking, routing), the
// routing service, the default approval policy and loop detection, and —
// on the SQLite store, which compose gives it to — chat compression.
func newAgentry(tb testing.TB, name string, events []*session.Event) (*variant, error) {
	ctx := tb.Context()
	v := &variant{name: name, events: events, tool: new(int)}
	b := &backend{}
	v.model = &b.script
	dir := tb.TempDir()
	ws, tmp := filepath.Join(dir, "workspace"), filepath.Join(dir, "tmp")
	for _, d := range []string{ws, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, err
		}
	}
	settings := config.Defaults()
	settings.Model.Name = modelName
	log := slog.New(slog.DiscardHandler)

	var svc session.Service
	var compression *runtime.CompressionConfig
	switch name {
	case agentryMemory:
		mem := session.InMemoryService()
		svc = mem
		v.reset = func(ctx context.Context) error { return resetInMemory(ctx, mem, events) }
	case agentrySQLite:
		store, err := sessions.OpenSQLite(ctx, filepath.Join(dir, "sessions.db"), sessions.WithLogger(log))
		if err != nil {
			return nil, err
		}
		tb.Cleanup(func() { _ = store.Close() })
		if _, err := store.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID, SessionID: sessionID}); err != nil {
			return nil, err
		}
		svc = store
		compression = &runtime.CompressionConfig{Store: store, Threshold: settings.Model.CompressionThreshold, UtilityModel: settings.Model.CompressionModel}
		v.reset = func(ctx context.Context) error {
			return store.ReplaceEvents(ctx, appName, userID, sessionID, events, nil)
		}
	}

	rs, err := routes.New(&settings, nil, nil, log)
	if err != nil {
		return nil, err
	}
	masker, err := masking.New(masking.Config{SpillDir: masking.SessionDir(tmp, sessionID), Logger: log})
	if err != nil {
		return nil, err
	}
	content := processors.NewContent(processors.ContentConfig{Roots: []string{ws}, TempDir: tmp, MaxItems: settings.Context.MaxDirectoryItems})
	chain := processors.NewChain(content, runtime.MaskingProcessor(masker, svc, nil), routing.NewProcessor(rs))
	policy, err := runtime.NewPolicy(runtime.ApprovalMode(settings.General.DefaultApprovalMode), settings.Tools.Allowed)
	if err != nil {
		return nil, err
	}
	_, decl, err := newADKTool(new(int))
	if err != nil {
		return nil, err
	}
	lt := &lookupTool{decl: decl}
	ld := settings.Model.LoopDetection
	s, err := runtime.New(ctx, runtime.Config{
		SessionID:   sessionID,
		Workspace:   ws,
		TempDir:     tmp,
		Model:       modelName,
		Resolver:    modeltest.FixedResolver{B: b},
		Routing:     rs,
		Instruction: runtime.SystemPrompt,
		Chain:       chain,
		Compression: compression,
		LoopDetection: &runtime.LoopConfig{Detector: loopdetect.Config{
			ToolCallThreshold: ld.ToolCallThreshold, ContentThreshold: ld.ContentThreshold,
			LLMCheckAfterTurns: ld.LLMCheckAfterTurns, DisableLLMCheck: ld.LLMCheckAfterTurns == 0,
		}},
		Tools:          []tools.Tool{lt},
		Policy:         policy,
		SessionService: svc,
		Logger:         log,
	})
	if err != nil {
		return nil, err
	}
	tb.Cleanup(func() { _ = s.Close() })
	v.tool = &lt.calls
	v.run = func(ctx context.Context) error {
		id, err := s.Send(ctx, runtime.TextMessage(prompt))
		if err != nil {
			return err
		}
		var end *runtime.AgentEnd
		for ev, err := range s.Stream(ctx, id) {
			if err != nil {
				return err
			}
			if ev.AgentEnd != nil {
				end = ev.AgentEnd
			}
		}
		if end == nil || end.Reason != runtime.EndCompleted {
			return fmt.Errorf("the stream ended %+v", end)
		}
		return nil
	}
	return v, nil
}

// resetInMemory replaces the session in an ADK in-memory service with one
// holding events. The service copies the events it stores, not their
// contents, which nothing in a turn writes.
func resetInMemory(ctx context.Context, svc session.Service, events []*session.Event) error {
	if err := svc.Delete(ctx, &session.DeleteRequest{AppName: appName, UserID: userID, SessionID: sessionID}); err != nil {
		return err
	}
	resp, err := svc.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID, SessionID: sessionID})
	if err != nil {
		return err
	}
	for _, ev := range events {
		if err := svc.AppendEvent(ctx, resp.Session, ev); err != nil {
			return err
		}
	}
	return nil
}
