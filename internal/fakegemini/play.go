package fakegemini

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"time"

	"google.golang.org/genai"
)

// play answers one request with one step. The request's context is passed
// to its methods: it is done when the client goes away.
type play struct {
	s    *Server
	w    http.ResponseWriter
	req  *Request
	n    int
	step Step
}

// run dispatches on the step's kind and the request's method.
func (p *play) run(ctx context.Context) {
	st := p.step
	switch {
	case st.body != nil:
		if !p.wait(ctx, st.pace) {
			return
		}
		writeError(p.w, st.status, st.body(p.req.Model))
	case st.count:
		if p.req.Method != MethodCountTokens {
			p.misuse("a countTokens step cannot answer " + p.req.Method)
			return
		}
		if !p.wait(ctx, st.pace) {
			return
		}
		writeJSON(p.w, map[string]any{"totalTokens": st.tokens})
	case p.req.Method == MethodCountTokens:
		p.misuse("a generation step cannot answer countTokens")
	case p.req.Method == MethodStream:
		p.stream(ctx)
	default:
		p.unary(ctx)
	}
}

// misuse reports a step that does not fit its request: a bug in the test's
// script, so the test fails and the client gets a 500 explaining it.
func (p *play) misuse(why string) {
	msg := fmt.Sprintf("fakegemini: request #%d (%s on %q) got step %s: %s", p.n, p.req.Method, p.req.Model, p.step.describe(), why)
	p.s.t.Errorf("%s", msg)
	writeError(p.w, http.StatusInternalServerError, ErrorBody(http.StatusInternalServerError, "INTERNAL", msg))
}

// stream answers streamGenerateContent with server-sent events.
func (p *play) stream(ctx context.Context) {
	payloads, _, err := p.render()
	if err != nil {
		p.misuse(err.Error())
		return
	}
	flusher, ok := p.w.(http.Flusher)
	if !ok {
		p.misuse("the response writer cannot flush")
		return
	}
	p.w.Header().Set("Content-Type", "text/event-stream")
	p.w.WriteHeader(http.StatusOK)
	// Headers go out at once so that the client's request returns and the
	// test observes a stream in progress, even before the first event.
	flusher.Flush()
	for _, pl := range payloads {
		if !p.wait(ctx, p.step.pace) {
			return
		}
		// The API ends events with CRLF pairs; the genai client accepts
		// both that and bare LF pairs.
		if _, err := fmt.Fprintf(p.w, "data: %s\r\n\r\n", pl); err != nil {
			return
		}
		flusher.Flush()
	}
	p.end(ctx)
}

// unary answers generateContent with the step's chunks merged into one
// response, or with the error event the step carries.
func (p *play) unary(ctx context.Context) {
	_, chunks, err := p.render()
	if err != nil {
		p.misuse(err.Error())
		return
	}
	if !p.wait(ctx, p.step.pace*time.Duration(len(chunks))) {
		return
	}
	if p.step.tail != tailEnd {
		// A broken or hanging unary call sends nothing at all.
		p.end(ctx)
		return
	}
	var resps []*genai.GenerateContentResponse
	for i, c := range chunks {
		if c.apiErr == nil && c.resp == nil {
			p.misuse(fmt.Sprintf("event %d is neither a response nor an error, which a unary reply cannot carry", i))
			return
		}
		if c.apiErr != nil {
			code := c.apiErr.Code
			if code == 0 {
				code = http.StatusInternalServerError
			}
			writeError(p.w, code, string(c.payload))
			return
		}
		resps = append(resps, c.resp)
	}
	writeJSON(p.w, mergeChunks(resps))
}

// end finishes a response according to the step's tail.
func (p *play) end(ctx context.Context) {
	switch p.step.tail {
	case tailCut:
		// ErrAbortHandler makes net/http close the connection without the
		// final zero-length chunk and without logging a stack trace.
		panic(http.ErrAbortHandler)
	case tailHang:
		timer := time.NewTimer(p.s.hangLimit)
		defer timer.Stop()
		select {
		case <-ctx.Done():
		case <-p.s.done:
		case <-timer.C:
			p.s.t.Errorf("fakegemini: request #%d: Hang step was not released by the client within %v", p.n, p.s.hangLimit)
		}
	}
}

// wait paces the reply. It reports false when the client went away or the
// test ended first, in which case the handler must return.
func (p *play) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	case <-p.s.done:
		return false
	}
}

// chunk is one event of a step decoded for a unary reply.
type chunk struct {
	payload []byte
	resp    *genai.GenerateContentResponse
	apiErr  *genai.APIError
}

// render encodes the step's events for this request. Generated chunks are
// completed first (see Step.fill). It returns the wire payloads and the same
// events decoded, for unary replies.
func (p *play) render() ([][]byte, []chunk, error) {
	evs := p.step.events
	outChars := 0
	for _, ev := range evs {
		if ev.err != nil {
			return nil, nil, ev.err
		}
		if ev.resp != nil {
			for _, c := range ev.resp.Candidates {
				if c != nil && c.Content != nil {
					for _, part := range c.Content.Parts {
						outChars += partChars(part)
					}
				}
			}
		}
	}
	payloads := make([][]byte, 0, len(evs))
	chunks := make([]chunk, 0, len(evs))
	for i, ev := range evs {
		if ev.resp == nil {
			payloads = append(payloads, ev.raw)
			chunks = append(chunks, decodeRaw(ev.raw))
			continue
		}
		// A shallow copy is enough: only top-level fields are filled, and
		// the step's own chunk may be shared by concurrent requests.
		r := *ev.resp
		if p.step.fill {
			r.ModelVersion = p.req.Model
			r.ResponseID = fmt.Sprintf("fakegemini-%d", p.n)
			if i == len(evs)-1 {
				prompt := estimateRequestTokens(p.req.Body)
				out := estimateTokens(outChars)
				r.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{
					PromptTokenCount:     prompt,
					CandidatesTokenCount: out,
					TotalTokenCount:      prompt + out,
				}
			}
		}
		b, err := json.Marshal(&r)
		if err != nil {
			return nil, nil, fmt.Errorf("event %d: encode chunk: %w", i, err)
		}
		payloads = append(payloads, b)
		chunks = append(chunks, chunk{payload: b, resp: &r})
	}
	return payloads, chunks, nil
}

// decodeRaw interprets a raw payload for a unary reply: an error object or a
// response. Anything else leaves both nil: malformed payloads are legitimate
// on a stream, where they test the client's decoding, and only a unary reply
// has no way to carry them.
func decodeRaw(raw []byte) chunk {
	c := chunk{payload: raw}
	var e struct {
		Error *genai.APIError `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Error != nil {
		c.apiErr = e.Error
		return c
	}
	var r genai.GenerateContentResponse
	if json.Unmarshal(raw, &r) == nil {
		c.resp = &r
	}
	return c
}

// mergeChunks folds stream chunks into the single response a unary call
// would have returned: parts are concatenated per candidate (adjacent text
// parts joined), and the latest non-empty top-level fields and finish reason
// win.
func mergeChunks(chunks []*genai.GenerateContentResponse) *genai.GenerateContentResponse {
	out := &genai.GenerateContentResponse{}
	for _, c := range chunks {
		if c == nil {
			continue
		}
		if c.ModelVersion != "" {
			out.ModelVersion = c.ModelVersion
		}
		if c.ResponseID != "" {
			out.ResponseID = c.ResponseID
		}
		if c.UsageMetadata != nil {
			out.UsageMetadata = c.UsageMetadata
		}
		if c.PromptFeedback != nil {
			out.PromptFeedback = c.PromptFeedback
		}
		if c.ModelStatus != nil {
			out.ModelStatus = c.ModelStatus
		}
		if !c.CreateTime.IsZero() {
			out.CreateTime = c.CreateTime
		}
		for i, cand := range c.Candidates {
			for len(out.Candidates) <= i {
				out.Candidates = append(out.Candidates, nil)
			}
			out.Candidates[i] = mergeCandidate(out.Candidates[i], cand)
		}
	}
	return out
}

// mergeCandidate appends next's content to prev's and takes next's other
// fields, keeping prev's where next leaves them empty.
func mergeCandidate(prev, next *genai.Candidate) *genai.Candidate {
	if next == nil {
		return prev
	}
	m := *next
	if prev == nil {
		if next.Content != nil {
			c := *next.Content
			c.Parts = slices.Clone(c.Parts)
			m.Content = &c
		}
		return &m
	}
	if m.FinishReason == "" {
		m.FinishReason, m.FinishMessage = prev.FinishReason, prev.FinishMessage
	}
	if m.SafetyRatings == nil {
		m.SafetyRatings = prev.SafetyRatings
	}
	if m.CitationMetadata == nil {
		m.CitationMetadata = prev.CitationMetadata
	}
	if m.GroundingMetadata == nil {
		m.GroundingMetadata = prev.GroundingMetadata
	}
	content := &genai.Content{}
	if prev.Content != nil {
		content.Role = prev.Content.Role
		content.Parts = slices.Clone(prev.Content.Parts)
	}
	if next.Content != nil {
		if next.Content.Role != "" {
			content.Role = next.Content.Role
		}
		for _, part := range next.Content.Parts {
			if n := len(content.Parts); n > 0 && joinable(content.Parts[n-1], part) {
				last := content.Parts[n-1]
				content.Parts[n-1] = &genai.Part{Text: last.Text + part.Text, Thought: part.Thought, ThoughtSignature: part.ThoughtSignature}
				continue
			}
			content.Parts = append(content.Parts, part)
		}
	}
	if prev.Content != nil || next.Content != nil {
		m.Content = content
	}
	return &m
}

// joinable reports whether two adjacent parts are pieces of the same text (or
// thought) that the API would have sent as one part in a unary reply. A part
// that already carries a thought signature closes its text.
func joinable(a, b *genai.Part) bool {
	return textOnly(a) && textOnly(b) && a.Thought == b.Thought && len(a.ThoughtSignature) == 0
}

// textOnly reports whether p holds text and nothing but text metadata.
func textOnly(p *genai.Part) bool {
	if p == nil || p.Text == "" {
		return false
	}
	q := *p
	q.Text, q.Thought, q.ThoughtSignature = "", false, nil
	return reflect.ValueOf(q).IsZero()
}
