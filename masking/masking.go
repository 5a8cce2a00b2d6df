// Package masking keeps long sessions within the model's context window
// the way gemini-cli does. Per turn, tool-output masking replaces old,
// bulky function responses with a short preview and the path of a file
// that holds the full response; per call, truncation shortens a shell
// command's (or an opted-in tool's) oversized output before the model
// first sees it, spilling the full text to a file.
//
// Both follow gemini-cli's toolOutputMaskingService.ts, tokenCalculation.ts
// and fileUtils.ts: the same thresholds, the same estimate, and the same
// placeholder, preview and truncation texts. Spill-file names differ on
// purpose: they are deterministic, so masking the same history twice
// writes the same files and produces the same placeholders.
package masking

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"

	"google.golang.org/genai"
)

// gemini-cli's masking defaults (DEFAULT_TOOL_PROTECTION_THRESHOLD and
// friends).
const (
	// DefaultProtectTokens is how many tokens of the newest tool output are
	// never masked.
	DefaultProtectTokens = 50_000
	// DefaultMinPrunableTokens is how many tokens of maskable tool output
	// must have built up behind the protected ones before any is masked.
	DefaultMinPrunableTokens = 30_000
	// MaskingIndicatorTag names the element that wraps a masked response.
	MaskingIndicatorTag = "tool_output_masked"
)

// DefaultExempt returns the tools whose output is never masked: gemini-cli's
// EXEMPT_TOOLS, outputs that stay high-signal however old.
func DefaultExempt() []string {
	return []string{"activate_skill", "ask_user", "enter_plan_mode", "exit_plan_mode"}
}

// Config configures a Masker. The zero value of each field but SpillDir
// means gemini-cli's default.
type Config struct {
	// ProtectTokens is the protection window: the newest tool outputs
	// adding up to this many estimated tokens are kept (the output that
	// crosses it is not). 0 means DefaultProtectTokens; a negative value
	// protects nothing.
	ProtectTokens int
	// MinPrunableTokens is the batch threshold: masking happens only when
	// the outputs behind the window add up to at least this many tokens.
	// 0 means DefaultMinPrunableTokens; a negative value means any amount.
	MinPrunableTokens int
	// DisableProtectLatestTurn lets the latest content of the history be
	// masked too; by default it is skipped, as gemini-cli's
	// protectLatestTurn does.
	DisableProtectLatestTurn bool
	// Exempt names the tools whose outputs are never masked; nil means
	// DefaultExempt(), an empty non-nil slice exempts none.
	Exempt []string
	// SpillDir is the directory the full outputs are written to, normally
	// SessionDir(tempDir, sessionID). Required.
	SpillDir string
	// Logger receives debug diagnostics; default slog.Default().
	Logger *slog.Logger
}

// Masked is one function response that masking replaces.
type Masked struct {
	// CallID is the function call id of the response.
	CallID string
	// Name is the tool name of the response.
	Name string
	// Response is the replacement response,
	// {"output": "<tool_output_masked>…</tool_output_masked>"}.
	Response map[string]any
	// Path is the file that holds the full original response as indented
	// JSON.
	Path string
}

// Masker decides which function responses of a history to mask and
// spills them. It holds no mutable state and is safe for concurrent use.
type Masker struct {
	protect, minPrunable int
	protectLatest        bool
	exempt               map[string]bool
	dir                  string
	log                  *slog.Logger
	// estimate returns a function-response part's token estimate; tests
	// replace it as gemini-cli's tests mock estimateTokenCountSync.
	estimate func(*genai.Part) int

	// memo holds what plan learnt of each function response of the last
	// two plans: a session's requests share their history's responses
	// (the conversation processor's cached contents), so a call measures
	// only the responses it has not seen. A response is replaced, never
	// written, so its pointer names its content.
	memoMu     sync.Mutex
	memo, prev map[*genai.FunctionResponse]measure
}

// measure is what plan needs of a function response.
type measure struct {
	tokens int
	masked bool
}

// measureOf returns fr's measure (p is its part), from the memo or
// computed. memoMu is held.
func (m *Masker) measureOf(p *genai.Part, fr *genai.FunctionResponse) measure {
	if v, ok := m.memo[fr]; ok {
		return v
	}
	v, ok := m.prev[fr]
	if !ok {
		v.masked = fr.Response == nil || hasMaskedTag(fr.Response)
		if !v.masked {
			v.tokens = m.estimate(p)
		}
	}
	m.memo[fr] = v
	return v
}

// New returns a masker for cfg.
func New(cfg Config) (*Masker, error) {
	if cfg.SpillDir == "" {
		return nil, errors.New("masking: a spill directory is required")
	}
	m := &Masker{
		protect:       positiveOr(cfg.ProtectTokens, DefaultProtectTokens),
		minPrunable:   positiveOr(cfg.MinPrunableTokens, DefaultMinPrunableTokens),
		protectLatest: !cfg.DisableProtectLatestTurn,
		exempt:        map[string]bool{},
		dir:           cfg.SpillDir,
		log:           cfg.Logger,
		estimate:      func(p *genai.Part) int { return partQuarters(p) / 4 },
	}
	exempt := cfg.Exempt
	if exempt == nil {
		exempt = DefaultExempt()
	}
	for _, name := range exempt {
		m.exempt[name] = true
	}
	if m.log == nil {
		m.log = slog.Default()
	}
	return m, nil
}

// positiveOr maps 0 to def and a negative value to 0.
func positiveOr(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// SpillDir returns the directory the masker writes full outputs to.
func (m *Masker) SpillDir() string { return m.dir }

// candidate is a prunable function response.
type candidate struct {
	part   *genai.Part
	tokens int
}

// plan is gemini-cli's backward scan over history (newest last): walking
// contents newest to oldest (skipping the latest one when it is
// protected) and their parts last to first, it sums the estimated tokens
// of function responses that are neither exempt nor masked already; the
// one that crosses the protection window and all older ones are
// prunable, provided they add up to the batch threshold. It returns the
// prunable responses newest first, or none.
func (m *Masker) plan(history []*genai.Content) []candidate {
	m.memoMu.Lock()
	defer m.memoMu.Unlock()
	// The responses this plan meets become the memo; those of the plan
	// before it that this one did not meet are forgotten with prev.
	// The two maps are reused, turn after turn.
	m.prev, m.memo = m.memo, m.prev
	if m.memo == nil {
		m.memo = make(map[*genai.FunctionResponse]measure, len(m.prev))
	}
	clear(m.memo)
	start := len(history) - 1
	if m.protectLatest {
		start--
	}
	// A first pass adds up; the candidates are collected in a second one,
	// from the first prunable response on, only when there are enough of
	// them: most calls mask nothing and allocate nothing.
	var (
		cumulative, prunable int
		crossed              bool
		fromI, fromJ         int
	)
	each := func(i0, j0 int, f func(p *genai.Part, tokens int) bool) {
		for i := i0; i >= 0; i-- {
			c := history[i]
			if c == nil {
				continue
			}
			j := len(c.Parts) - 1
			if i == i0 && j0 >= 0 {
				j = j0
			}
			for ; j >= 0; j-- {
				p := c.Parts[j]
				if p == nil || p.FunctionResponse == nil {
					continue
				}
				fr := p.FunctionResponse
				if fr.Name != "" && m.exempt[fr.Name] {
					continue
				}
				ms := m.measureOf(p, fr)
				if ms.masked {
					continue
				}
				if !f(p, ms.tokens) {
					fromI, fromJ = i, j
					return
				}
			}
		}
	}
	each(start, -1, func(_ *genai.Part, tokens int) bool {
		cumulative += tokens
		if cumulative <= m.protect {
			return true
		}
		crossed = true
		return false
	})
	if !crossed {
		return nil
	}
	each(fromI, fromJ, func(_ *genai.Part, tokens int) bool {
		prunable += tokens
		return true
	})
	if prunable < m.minPrunable {
		return nil
	}
	var out []candidate
	each(fromI, fromJ, func(p *genai.Part, tokens int) bool {
		out = append(out, candidate{part: p, tokens: tokens})
		return true
	})
	return out
}

// Mask computes the masking of contents, a request's history with the
// newest content last. It writes each masked response's full indented
// JSON to a file in the spill directory and returns the replacements,
// newest first; the files are complete when it returns, so the
// replacements may be persisted at once. It does not modify contents. A
// response is masked only when its placeholder is smaller, as gemini-cli
// decides; a response without a call id, or whose id another response
// shares, is left alone, since nothing could address it in the session.
// Masking is idempotent: masked responses are skipped, so a second pass
// over the masked history returns nothing and writes nothing.
func (m *Masker) Mask(ctx context.Context, contents []*genai.Content) ([]Masked, error) {
	pass := m.mask(ctx, contents, m.plan(contents), nil)
	if err := pass.write(); err != nil {
		return nil, err
	}
	return pass.masked, nil
}

// idFunc returns the call id of a function response of the history.
type idFunc func(*genai.FunctionResponse) string

func ownID(fr *genai.FunctionResponse) string { return fr.ID }

// pass is a computed masking pass: the replacements, newest first, and
// the spill file content of each.
type pass struct {
	dir    string
	masked []Masked
	files  [][]byte
}

// mask computes the masking of the planned candidates of history, with
// call ids from idOf (nil: the responses' own ids), without writing
// anything. Candidates are independent, so they are encoded in parallel.
func (m *Masker) mask(ctx context.Context, history []*genai.Content, cands []candidate, idOf idFunc) *pass {
	out := &pass{dir: m.dir}
	if len(cands) == 0 {
		return out
	}
	if idOf == nil {
		idOf = ownID
	}
	shared := sharedIDs(history, idOf)
	results := make([]Masked, len(cands))
	files := make([][]byte, len(cands))
	saved := make([]int, len(cands))
	parallel(len(cands), func(i int) {
		c := cands[i]
		fr := c.part.FunctionResponse
		id := idOf(fr)
		if id == "" || shared[id] {
			m.log.DebugContext(ctx, "tool output masking: response cannot be addressed", "tool", fr.Name, "callId", id)
			return
		}
		mk, content, after, ok := m.maskOne(ctx, c, id)
		if !ok {
			return
		}
		results[i], files[i], saved[i] = mk, content, c.tokens-after
	})
	total := 0
	for i, r := range results {
		if r.Path != "" {
			out.masked = append(out.masked, r)
			out.files = append(out.files, files[i])
			total += saved[i]
		}
	}
	if len(out.masked) > 0 {
		m.log.DebugContext(ctx, "tool output masking", "masked", len(out.masked), "tokensSaved", total)
	}
	return out
}

// write writes the pass's spill files, in parallel: a first pass over a
// long unmasked history creates hundreds of files, and file creation
// dominates its cost. Every file is complete when it returns.
func (p *pass) write() error {
	if len(p.masked) == 0 {
		return nil
	}
	if err := mkdirSpill(p.dir); err != nil {
		return err
	}
	errs := make([]error, len(p.masked))
	parallel(len(p.masked), func(i int) {
		errs[i] = writeSpill(p.masked[i].Path, p.files[i])
	})
	return errors.Join(errs...)
}

// maskOne builds the masked response of candidate c, with call id id, its
// spill content and its token estimate. ok
// is false when the placeholder would not be smaller.
func (m *Masker) maskOne(ctx context.Context, c candidate, id string) (mk Masked, content []byte, tokens int, ok bool) {
	fr := c.part.FunctionResponse
	name := fr.Name
	if name == "" {
		name = "unknown_tool"
	}
	path, err := joinName(m.dir, maskedFileName(name, id))
	if err != nil {
		// Unreachable: sanitised names cannot leave the directory.
		m.log.ErrorContext(ctx, "tool output masking: bad spill name", "err", err)
		return Masked{}, nil, 0, false
	}
	content = appendJSON(make([]byte, 0, sizeHint(fr.Response)), fr.Response, true)
	var preview string
	if name == ShellToolName {
		preview = shellPreview(fr.Response)
	} else {
		preview = genericPreview(content)
	}
	resp := map[string]any{"output": snippet(preview, path)}
	after := m.estimate(&genai.Part{FunctionResponse: &genai.FunctionResponse{
		Name: fr.Name, Response: resp, Parts: fr.Parts,
	}})
	if c.tokens-after <= 0 {
		return Masked{}, nil, 0, false
	}
	return Masked{CallID: id, Name: fr.Name, Response: resp, Path: path}, content, after, true
}

// maxWorkers bounds the goroutines of one masking pass.
const maxWorkers = 4

// parallel runs fn(i) for i in [0, n) on up to maxWorkers goroutines (one
// for small n).
func parallel(n int, fn func(i int)) {
	workers := min(maxWorkers, runtime.GOMAXPROCS(0), (n+15)/16)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// sharedIDs returns the call ids that more than one function response of
// history carries.
func sharedIDs(history []*genai.Content, idOf idFunc) map[string]bool {
	seen := map[string]bool{}
	var shared map[string]bool
	for _, c := range history {
		if c == nil {
			continue
		}
		for _, p := range c.Parts {
			if p == nil || p.FunctionResponse == nil {
				continue
			}
			id := idOf(p.FunctionResponse)
			if id == "" {
				continue
			}
			if seen[id] {
				if shared == nil {
					shared = map[string]bool{}
				}
				shared[id] = true
			}
			seen[id] = true
		}
	}
	return shared
}

// Apply returns contents with the function responses named by masked
// (matched by call id and tool name) replaced by their masked responses.
// The affected Content, Part and FunctionResponse structs are copied, never
// modified, since the contents may share them with the session; contents
// comes back unchanged when nothing matches.
func Apply(contents []*genai.Content, masked []Masked) []*genai.Content {
	return apply(contents, masked, ownID)
}

func apply(contents []*genai.Content, masked []Masked, idOf idFunc) []*genai.Content {
	if len(masked) == 0 {
		return contents
	}
	byID := make(map[string]*Masked, len(masked))
	for i := range masked {
		byID[masked[i].CallID] = &masked[i]
	}
	var out []*genai.Content
	for i, c := range contents {
		if c == nil {
			continue
		}
		var parts []*genai.Part
		for j, p := range c.Parts {
			if p == nil || p.FunctionResponse == nil {
				continue
			}
			id := idOf(p.FunctionResponse)
			mk := byID[id]
			if id == "" || mk == nil || mk.Name != p.FunctionResponse.Name {
				continue
			}
			if parts == nil {
				parts = append([]*genai.Part(nil), c.Parts...)
			}
			np := *p
			fr := *p.FunctionResponse
			fr.Response = mk.Response
			np.FunctionResponse = &fr
			parts[j] = &np
		}
		if parts == nil {
			continue
		}
		if out == nil {
			out = append([]*genai.Content(nil), contents...)
		}
		nc := *c
		nc.Parts = parts
		out[i] = &nc
	}
	if out == nil {
		return contents
	}
	return out
}
