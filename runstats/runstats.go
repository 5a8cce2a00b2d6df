// Package runstats is gemini-cli's SessionMetrics — a run's model calls
// and tokens per model and role, its tool calls with their decisions, and
// the lines its edits changed — folded from a session's protocol events.
// It is the "stats" of `agentry run -o json`, the totals of stream-json's
// result line and of a batch line, and what /stats shows.
package runstats

import (
	"github.com/agentry-dev/agentry/runtime"
)

// Metrics is gemini-cli's SessionMetrics, the stats of -o json, built from
// protocol events with Observe. Its JSON is gemini-cli's.
type Metrics struct {
	// Models holds the model calls by model name.
	Models map[string]*ModelMetrics `json:"models"`
	// Tools holds the tool calls.
	Tools ToolMetrics `json:"tools"`
	// Files holds the lines the edits changed.
	Files FileMetrics `json:"files"`

	lastModel string // the model of the last main-thread model call
}

// ModelMetrics are one model's calls: in all, and by role (main, a
// utility call's role …).
type ModelMetrics struct {
	API    APIMetrics              `json:"api"`
	Tokens TokenMetrics            `json:"tokens"`
	Roles  map[string]*RoleMetrics `json:"roles"`
}

// APIMetrics count a model's requests, errors and latency.
type APIMetrics struct {
	TotalRequests  int            `json:"totalRequests"`
	TotalErrors    int            `json:"totalErrors"`
	TotalLatencyMs int64          `json:"totalLatencyMs"`
	ErrorsByType   map[string]int `json:"errorsByType"`
}

// RoleMetrics are the calls of one role.
type RoleMetrics struct {
	TotalRequests  int          `json:"totalRequests"`
	TotalErrors    int          `json:"totalErrors"`
	TotalLatencyMs int64        `json:"totalLatencyMs"`
	Tokens         TokenMetrics `json:"tokens"`
}

// TokenMetrics are gemini-cli's token counts: Prompt as the API reports
// it, Input the part of it not cached.
type TokenMetrics struct {
	Input      int `json:"input"`
	Prompt     int `json:"prompt"`
	Candidates int `json:"candidates"`
	Total      int `json:"total"`
	Cached     int `json:"cached"`
	Thoughts   int `json:"thoughts"`
	Tool       int `json:"tool"`
}

func (t *TokenMetrics) add(u *runtime.Usage, meta map[string]any) {
	t.Prompt += deref(u.InputTokens)
	t.Candidates += deref(u.OutputTokens)
	t.Cached += deref(u.CachedTokens)
	t.Total += metaInt(meta, "totalTokens")
	t.Thoughts += metaInt(meta, "thoughtsTokens")
	t.Tool += metaInt(meta, "toolTokens")
	t.Input = max(0, t.Prompt-t.Cached)
}

// Decisions count how tool calls were approved: gemini-cli's
// ToolCallDecision.
type Decisions struct {
	Accept     int `json:"accept"`
	Reject     int `json:"reject"`
	Modify     int `json:"modify"`
	AutoAccept int `json:"auto_accept"`
}

func (d *Decisions) add(decision string) {
	switch decision {
	case "accept":
		d.Accept++
	case "reject":
		d.Reject++
	case "modify":
		d.Modify++
	case "auto_accept":
		d.AutoAccept++
	}
}

// ToolMetrics are the tool calls, in all and by tool name.
type ToolMetrics struct {
	TotalCalls      int                   `json:"totalCalls"`
	TotalSuccess    int                   `json:"totalSuccess"`
	TotalFail       int                   `json:"totalFail"`
	TotalDurationMs int64                 `json:"totalDurationMs"`
	TotalDecisions  Decisions             `json:"totalDecisions"`
	ByName          map[string]*ToolStats `json:"byName"`
}

// ToolStats are one tool's calls.
type ToolStats struct {
	Count      int       `json:"count"`
	Success    int       `json:"success"`
	Fail       int       `json:"fail"`
	DurationMs int64     `json:"durationMs"`
	Decisions  Decisions `json:"decisions"`
}

// FileMetrics count the lines the edits added and removed.
type FileMetrics struct {
	TotalLinesAdded   int `json:"totalLinesAdded"`
	TotalLinesRemoved int `json:"totalLinesRemoved"`
}

// New returns empty metrics.
func New() *Metrics {
	return &Metrics{Models: map[string]*ModelMetrics{}, Tools: ToolMetrics{ByName: map[string]*ToolStats{}}}
}

// FromEvents returns the metrics of evs, in order (a session's Events).
func FromEvents(evs []runtime.Event) *Metrics {
	m := New()
	for _, ev := range evs {
		m.Observe(ev)
	}
	return m
}

func (m *Metrics) model(name string) *ModelMetrics {
	mm := m.Models[name]
	if mm == nil {
		mm = &ModelMetrics{API: APIMetrics{ErrorsByType: map[string]int{}}, Roles: map[string]*RoleMetrics{}}
		m.Models[name] = mm
	}
	return mm
}

// Observe folds one event into the metrics. A subagent's model calls,
// which reach the parent as updates of its invoke_agent call, count as
// the parent's, as in gemini-cli's totals.
func (m *Metrics) Observe(ev runtime.Event) {
	switch ev.Type {
	case runtime.EventError:
		// gemini-cli counts a stream that stayed invalid as an API error
		// of the model that sent it, by kind.
		if kind, ok := ev.Meta["errorType"].(string); ok && ev.Meta["code"] == "INVALID_STREAM" && m.lastModel != "" {
			mm := m.model(m.lastModel)
			mm.API.TotalErrors++
			mm.API.ErrorsByType[kind]++
		}
	case runtime.EventUsage:
		m.lastModel = ev.Usage.Model
		mm := m.model(ev.Usage.Model)
		latency := int64(metaInt(ev.Meta, "durationMs"))
		mm.API.TotalRequests++
		mm.API.TotalLatencyMs += latency
		mm.Tokens.add(ev.Usage, ev.Meta)
		role, _ := ev.Meta["role"].(string)
		if role != "" {
			rm := mm.Roles[role]
			if rm == nil {
				rm = &RoleMetrics{}
				mm.Roles[role] = rm
			}
			rm.TotalRequests++
			rm.TotalLatencyMs += latency
			rm.Tokens.add(ev.Usage, ev.Meta)
		}
	case runtime.EventToolUpdate:
		// A subagent's model calls reach the parent as updates of its
		// invoke_agent call; they are this run's tokens too, as in
		// gemini-cli's totals.
		if child, ok := ev.ToolUpdate.Data["event"].(*runtime.Event); ok && child.Type == runtime.EventUsage {
			m.Observe(*child)
		}
	case runtime.EventToolResponse:
		r := ev.ToolResponse
		ts := m.Tools.ByName[r.Name]
		if ts == nil {
			ts = &ToolStats{}
			m.Tools.ByName[r.Name] = ts
		}
		m.Tools.TotalCalls++
		ts.Count++
		if r.IsError {
			m.Tools.TotalFail++
			ts.Fail++
		} else {
			m.Tools.TotalSuccess++
			ts.Success++
		}
		d := int64(metaInt(r.Data, "durationMs"))
		m.Tools.TotalDurationMs += d
		ts.DurationMs += d
		if dec, ok := r.Data["decision"].(string); ok {
			m.Tools.TotalDecisions.add(dec)
			ts.Decisions.add(dec)
		}
		if stat, ok := r.Data["diffStat"].(map[string]any); ok {
			m.Files.TotalLinesAdded += metaInt(stat, "linesAdded")
			m.Files.TotalLinesRemoved += metaInt(stat, "linesRemoved")
		}
	}
}

// StreamStats is stream-json's result stats: the totals over the models.
type StreamStats struct {
	TotalTokens  int                          `json:"total_tokens"`
	InputTokens  int                          `json:"input_tokens"`
	OutputTokens int                          `json:"output_tokens"`
	Cached       int                          `json:"cached"`
	Input        int                          `json:"input"`
	DurationMs   int64                        `json:"duration_ms"`
	ToolCalls    int                          `json:"tool_calls"`
	Models       map[string]ModelStreamTokens `json:"models"`
}

// ModelStreamTokens are one model's tokens in StreamStats.
type ModelStreamTokens struct {
	TotalTokens  int `json:"total_tokens"`
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	Cached       int `json:"cached"`
	Input        int `json:"input"`
}

// StreamStats converts the metrics as gemini-cli's convertToStreamStats
// does, with the run's duration.
func (m *Metrics) StreamStats(durationMs int64) StreamStats {
	s := StreamStats{DurationMs: durationMs, ToolCalls: m.Tools.TotalCalls, Models: map[string]ModelStreamTokens{}}
	for name, mm := range m.Models {
		t := ModelStreamTokens{
			TotalTokens: mm.Tokens.Total, InputTokens: mm.Tokens.Prompt, OutputTokens: mm.Tokens.Candidates,
			Cached: mm.Tokens.Cached, Input: mm.Tokens.Input,
		}
		s.Models[name] = t
		s.TotalTokens += t.TotalTokens
		s.InputTokens += t.InputTokens
		s.OutputTokens += t.OutputTokens
		s.Cached += t.Cached
		s.Input += t.Input
	}
	return s
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// metaInt reads a number from decoded or in-memory metadata.
func metaInt(m map[string]any, key string) int {
	switch v := m[key].(type) {
	case int:
		return v
	case int32:
		return int(v)
	case int64:
		return int(v)
	case float64:
		return int(v)
	}
	return 0
}
