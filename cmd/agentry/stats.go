package main

import (
	"github.com/agentry-dev/agentry/runtime"
)

// sessionMetrics is gemini-cli's SessionMetrics, the stats of -o json, built
// from protocol events.
type sessionMetrics struct {
	Models map[string]*modelMetrics `json:"models"`
	Tools  toolMetrics              `json:"tools"`
	Files  fileMetrics              `json:"files"`

	lastModel string // the model of the last main-thread model call
}

type modelMetrics struct {
	API    apiMetrics              `json:"api"`
	Tokens tokenMetrics            `json:"tokens"`
	Roles  map[string]*roleMetrics `json:"roles"`
}

type apiMetrics struct {
	TotalRequests  int            `json:"totalRequests"`
	TotalErrors    int            `json:"totalErrors"`
	TotalLatencyMs int64          `json:"totalLatencyMs"`
	ErrorsByType   map[string]int `json:"errorsByType"`
}

type roleMetrics struct {
	TotalRequests  int          `json:"totalRequests"`
	TotalErrors    int          `json:"totalErrors"`
	TotalLatencyMs int64        `json:"totalLatencyMs"`
	Tokens         tokenMetrics `json:"tokens"`
}

type tokenMetrics struct {
	Input      int `json:"input"`
	Prompt     int `json:"prompt"`
	Candidates int `json:"candidates"`
	Total      int `json:"total"`
	Cached     int `json:"cached"`
	Thoughts   int `json:"thoughts"`
	Tool       int `json:"tool"`
}

func (t *tokenMetrics) add(u *runtime.Usage, meta map[string]any) {
	t.Prompt += deref(u.InputTokens)
	t.Candidates += deref(u.OutputTokens)
	t.Cached += deref(u.CachedTokens)
	t.Total += metaInt(meta, "totalTokens")
	t.Thoughts += metaInt(meta, "thoughtsTokens")
	t.Tool += metaInt(meta, "toolTokens")
	t.Input = max(0, t.Prompt-t.Cached)
}

type decisions struct {
	Accept     int `json:"accept"`
	Reject     int `json:"reject"`
	Modify     int `json:"modify"`
	AutoAccept int `json:"auto_accept"`
}

func (d *decisions) add(decision string) {
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

type toolMetrics struct {
	TotalCalls      int                   `json:"totalCalls"`
	TotalSuccess    int                   `json:"totalSuccess"`
	TotalFail       int                   `json:"totalFail"`
	TotalDurationMs int64                 `json:"totalDurationMs"`
	TotalDecisions  decisions             `json:"totalDecisions"`
	ByName          map[string]*toolStats `json:"byName"`
}

type toolStats struct {
	Count      int       `json:"count"`
	Success    int       `json:"success"`
	Fail       int       `json:"fail"`
	DurationMs int64     `json:"durationMs"`
	Decisions  decisions `json:"decisions"`
}

type fileMetrics struct {
	TotalLinesAdded   int `json:"totalLinesAdded"`
	TotalLinesRemoved int `json:"totalLinesRemoved"`
}

func newSessionMetrics() *sessionMetrics {
	return &sessionMetrics{Models: map[string]*modelMetrics{}, Tools: toolMetrics{ByName: map[string]*toolStats{}}}
}

func (m *sessionMetrics) model(name string) *modelMetrics {
	mm := m.Models[name]
	if mm == nil {
		mm = &modelMetrics{API: apiMetrics{ErrorsByType: map[string]int{}}, Roles: map[string]*roleMetrics{}}
		m.Models[name] = mm
	}
	return mm
}

// observe folds one event into the metrics.
func (m *sessionMetrics) observe(ev runtime.Event) {
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
				rm = &roleMetrics{}
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
			m.observe(*child)
		}
	case runtime.EventToolResponse:
		r := ev.ToolResponse
		ts := m.Tools.ByName[r.Name]
		if ts == nil {
			ts = &toolStats{}
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

// streamStats is stream-json's result stats.
type streamStats struct {
	TotalTokens  int                          `json:"total_tokens"`
	InputTokens  int                          `json:"input_tokens"`
	OutputTokens int                          `json:"output_tokens"`
	Cached       int                          `json:"cached"`
	Input        int                          `json:"input"`
	DurationMs   int64                        `json:"duration_ms"`
	ToolCalls    int                          `json:"tool_calls"`
	Models       map[string]modelStreamTokens `json:"models"`
}

type modelStreamTokens struct {
	TotalTokens  int `json:"total_tokens"`
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	Cached       int `json:"cached"`
	Input        int `json:"input"`
}

// streamStats converts the metrics as gemini-cli's convertToStreamStats does.
func (m *sessionMetrics) streamStats(durationMs int64) streamStats {
	s := streamStats{DurationMs: durationMs, ToolCalls: m.Tools.TotalCalls, Models: map[string]modelStreamTokens{}}
	for name, mm := range m.Models {
		t := modelStreamTokens{
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
