package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/toolutils"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/hooks"
	"github.com/agentry-dev/agentry/plugins/hookbridge"
	"github.com/agentry-dev/agentry/policy"
	"github.com/agentry-dev/agentry/telemetry"
	"github.com/agentry-dev/agentry/tools"
)

// scheduledTool is how an agentry tool appears to ADK. Its Run is the tool
// scheduler for one call: it runs after any BeforeTool hook, asks the policy
// (and, when needed, a human), executes the tool with its live output going
// out as tool_update events, and turns the result into the function
// response the model reads — {"output": …} on success, an error otherwise,
// which ADK sends as {"error": …}, as gemini-cli's scheduler does. Shell
// output too long for the model is truncated there, the full text saved to
// a file.
type scheduledTool struct {
	t        tools.Tool
	policy   *Policy
	approver Approver
	limit    *outputLimit
	tel      *telemetry.Telemetry // nil: no telemetry
	hooks    *hookbridge.Bridge   // nil: no hooks
	excl     *toolExclusion       // nil: always declared
}

var _ tool.Tool = (*scheduledTool)(nil)

// Unwrap returns the agentry tool the call runs.
func (st *scheduledTool) Unwrap() tools.Tool { return st.t }

func (st *scheduledTool) Name() string        { return st.t.Name() }
func (st *scheduledTool) Description() string { return st.t.Declaration().Description }
func (st *scheduledTool) IsLongRunning() bool { return false }

// Declaration returns the tool's function declaration.
func (st *scheduledTool) Declaration() *genai.FunctionDeclaration { return st.t.Declaration() }

// ProcessRequest adds the tool to the request ADK is building, unless the
// policy denies every call of it in the current mode (toolExclusion): then
// the model is not offered it, and a call of it is one to an unknown tool.
func (st *scheduledTool) ProcessRequest(_ agent.Context, req *model.LLMRequest) error {
	if st.excl != nil && st.excl.excluded(st.t.Name()) {
		return nil
	}
	return toolutils.PackTool(req, st)
}

// Run schedules one call.
func (st *scheduledTool) Run(ctx agent.Context, rawArgs any) (resp map[string]any, err error) {
	ss := streamStateFrom(ctx)
	callID := ctx.FunctionCallID()
	info := &callInfo{tool: st.t}
	execCtx := context.Context(ctx)
	if st.tel != nil {
		var tc *telemetry.ToolCall
		execCtx, tc = st.tel.StartToolCall(ctx, st.t.Name(), callID)
		defer func() {
			status := "success"
			switch {
			case info.errType == tools.ErrCancelled:
				status = "cancelled"
			case err != nil:
				status = "error"
			}
			tc.End(status, err)
		}()
	}
	if ss != nil {
		ss.setCall(callID, info)
	}
	// A call queued behind one that was aborted must not start.
	if err := context.Cause(ctx); err != nil {
		info.errType = tools.ErrCancelled
		return nil, err
	}
	args, ok := rawArgs.(map[string]any)
	if !ok && rawArgs != nil {
		info.errType = tools.ErrInvalidParams
		return nil, fmt.Errorf("invalid arguments for %s: want a JSON object, got %T", st.t.Name(), rawArgs)
	}
	if args == nil {
		args = map[string]any{}
	}

	// The protected path (tools.ProtectedPath) the call writes as decided;
	// checked again just before it runs, since a symlink swapped on the
	// way (while a human reads the prompt, say) could redirect an approved
	// write into .git.
	// Someone can answer an ask when the session has an approver (the
	// terminal, an A2A client, an IDE), as gemini-cli's interactive mode.
	interactive := st.approver != nil
	decision, denyMsg, mode, decided := st.policy.decide(st.t, args, interactive)
	guarded := mode != ApprovalYolo
	var decidedFor string
	if guarded {
		decidedFor, _, _ = protectedTarget(st.t, args)
	}
	if decision == Allow && ss != nil && ss.mustAsk(callID) {
		decision = Ask
	}
	switch decision {
	case Ask:
		if st.approver != nil && st.hooks != nil && ss != nil {
			// gemini-cli's Notification hook: a tool awaits approval.
			st.hooks.Run(ctx, ss, hooks.Notification, "", map[string]any{
				"notification_type": "ToolPermission",
				"message":           fmt.Sprintf("Tool %s requires confirmation", st.t.DisplayName()),
				"details":           map[string]any{"tool_name": st.t.Name(), "tool_input": args, "call_id": callID},
			})
		}
		if st.approver == nil {
			// No decision was made: gemini-cli counts none either.
			info.errType = tools.ErrPolicyViolation
			st.hint(ctx, ss, confirmationHint(st.t, args))
			return nil, needsConfirmation(st.t)
		}
		req := ApprovalRequest{
			CallID: callID, Tool: st.t.Name(), DisplayName: st.t.DisplayName(),
			Description: st.t.Describe(args), Kind: st.t.Kind(), Args: args,
			AlwaysHidden: st.policy.shared.alwaysHidden(), SaveHidden: !st.policy.shared.permanent,
		}
		if m, ok := st.t.(mcpTool); ok {
			server, name, _ := m.MCP()
			req.MCP = &MCPDetails{ServerName: server, ToolName: name}
		}
		if p, ok := st.t.(tools.Previewer); ok {
			req.Diff, _ = p.Preview(args)
		}
		var outcome Outcome
		var edited map[string]any
		if ea, ok := st.approver.(EditingApprover); ok {
			outcome, edited, err = ea.ApproveEdit(ctx, req)
		} else {
			outcome, err = st.approver.Approve(ctx, req)
		}
		if err == nil && edited != nil && outcome.proceeds() {
			args = edited
			if guarded {
				decidedFor, _, _ = protectedTarget(st.t, args)
			}
		}
		if errors.Is(err, ErrNoHuman) {
			// As without an approver: nobody decided.
			info.errType = tools.ErrPolicyViolation
			st.hint(ctx, ss, confirmationHint(st.t, args))
			return nil, needsConfirmation(st.t)
		}
		if err != nil {
			info.errType = tools.ErrCancelled
			return nil, fmt.Errorf("approval of %s failed: %w", st.t.Name(), err)
		}
		switch outcome {
		case ProceedOnce:
			info.decision = "accept"
		case ProceedAlways, ProceedAlwaysTool, ProceedAlwaysServer, ProceedAlwaysAndSave:
			info.decision = "auto_accept"
			st.always(ctx, ss, args, outcome)
		default:
			info.errType = tools.ErrPolicyViolation
			info.decision = "reject"
			//lint:ignore ST1005 the model reads gemini-cli's sentence verbatim
			return nil, errors.New("User denied execution.")
		}
	case Deny:
		// A policy's denial is not a user's decision; gemini-cli's
		// statistics count none.
		info.errType = tools.ErrPolicyViolation
		if !interactive && defaultDenial(decided) {
			// No rule of the user's denied it: tell the user (not the
			// model) what would allow it.
			st.hint(ctx, ss, allowHint(st.t, args))
		}
		return nil, errors.New(denyMsg)
	default:
		// An allowed call proceeds once, as gemini-cli counts it (yolo
		// included); auto_accept is for calls an "always" answer allowed.
		info.decision = "accept"
	}

	if guarded {
		if p, why, ok := protectedTarget(st.t, args); ok && p != decidedFor {
			info.errType = tools.ErrPolicyViolation
			return nil, fmt.Errorf("%s no longer writes the file it was allowed to write: it now resolves to %s, a protected path (%s); the call was not run", st.t.Name(), p, why)
		}
	}
	if o, ok := st.approver.(ExecutionObserver); ok {
		o.Executing(ctx, callID)
	}
	call := tools.Call{ID: callID, Args: args}
	if ss != nil {
		call.Output = func(chunk string) { ss.toolOutput(callID, chunk) }
	}
	start := time.Now()
	res, err := st.t.Execute(execCtx, call)
	info.durationMs = time.Since(start).Milliseconds()
	if err != nil {
		info.errType = tools.TypeOf(err)
		info.errDisplay = tools.DisplayOf(err)
		if info.errType.Fatal() && ss != nil {
			ss.cancel(&FatalToolError{Tool: st.t.Name(), Err: err})
		}
		if info.errType == tools.ErrCancelled {
			err = st.limit.truncateCancelled(ctx, st.t, callID, err, info)
		}
		return nil, err
	}
	info.result = res
	if done, _ := res.Data["taskCompleted"].(bool); done {
		// complete_task ends a subagent's loop: no model call follows.
		ctx.Actions().SkipSummarization = true
	}
	out, err := st.limit.truncateResult(st.t, callID, res.LLMContent, info)
	if err != nil {
		info.errType = tools.TypeOf(err)
		return nil, err
	}
	return map[string]any{"output": out}, nil
}

// hint tells the user what would allow a call the policy refused, once
// per tool in a run: a warning event (run's [WARNING] line on stderr, a
// warning line in stream-json, the terminal's notice), never the model's
// function response, which keeps gemini-cli's text.
func (st *scheduledTool) hint(ctx context.Context, ss *streamState, hint string) {
	policyHint(ctx, ss, st.policy, st.t.Name(), hint)
}

// policyHint is scheduledTool.hint for the tool named tool.
func policyHint(ctx context.Context, ss *streamState, p *Policy, tool, hint string) {
	if hint == "" || !p.hintOnce(tool) {
		return
	}
	msg := fmt.Sprintf("%s was refused: %s", tool, hint)
	if ss != nil {
		ss.Warn("POLICY_HINT", msg)
		return
	}
	slog.Default().WarnContext(ctx, msg)
}

// always adds the rules of a human's "always" answer. proceed_always on a
// file edit also switches the session to auto_edit, as in gemini-cli; a
// rule that could not be saved is a warning, the session rule still
// holds.
func (st *scheduledTool) always(ctx context.Context, ss *streamState, args map[string]any, o Outcome) {
	// For a tool of no MCP server, the MCP answers are proceed_always.
	if _, isMCP := st.t.(mcpTool); !isMCP && (o == ProceedAlwaysTool || o == ProceedAlwaysServer) {
		o = ProceedAlways
	}
	switchMode, saveErr, err := st.policy.AlwaysOutcome(st.t, args, o)
	log := slog.Default()
	if ss != nil {
		log = ss.session.log
	}
	if err != nil {
		log.WarnContext(ctx, "approval: the answer adds no rule", "tool", st.t.Name(), "outcome", string(o), "err", err)
	}
	if saveErr != nil {
		// gemini-cli's text; the session rule holds all the same. A
		// corrupted file the saver moved aside is its own warning.
		msg := fmt.Sprintf("Failed to persist policy for %s: %v", st.t.Name(), saveErr)
		if errors.Is(saveErr, policy.ErrCorrupted) {
			msg = saveErr.Error()
		}
		if ss != nil {
			ss.Warn("POLICY_SAVE_FAILED", msg)
		} else {
			log.WarnContext(ctx, msg)
		}
	}
	if switchMode && st.policy.Mode() != ApprovalAutoEdit && st.policy.Mode() != ApprovalYolo {
		if ss != nil && st.policy == ss.session.cfg.policy {
			_ = ss.session.SetApprovalMode(ApprovalAutoEdit)
		} else {
			_ = st.policy.SetMode(ApprovalAutoEdit)
		}
	}
}

// defaultDenial reports whether a denial came from no rule or a bundled
// default without a message of its own (a call that needs a human in a run
// without one), rather than from a rule someone wrote.
func defaultDenial(res policy.Result) bool {
	return res.Rule == nil || res.Rule.Priority < float64(policy.TierExtension) && res.Rule.DenyMessage == ""
}

// toolOutput emits a running call's live output.
func (ss *streamState) toolOutput(callID, chunk string) {
	ss.session.emit(ss.stream, Event{Type: EventToolUpdate, ToolUpdate: &ToolUpdate{
		RequestID: callID, Content: []ContentPart{TextPart(chunk)},
	}})
}
