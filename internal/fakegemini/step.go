package fakegemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"google.golang.org/genai"
)

// Step is one scripted reply of the fake, consumed by exactly one request.
//
// A Step describes a stream of chunks, an HTTP error, or a token count. The
// same stream step also answers a unary generateContent request, with its
// chunks merged into one response, so a test can script a model turn without
// caring which of the two methods the code under test uses.
//
// The zero Step is an empty stream: status 200 and no events. Steps are
// immutable values; enqueueing one twice is safe.
type Step struct {
	// name describes the step in failure messages.
	name string
	// status and body make this an HTTP error reply when body is set. body
	// receives the requested model so messages can name it as the API does.
	status int
	body   func(model string) string
	// events are the stream's data events, in order.
	events []event
	// fill completes generated chunks at serve time with the model version,
	// a response id and, on the last chunk, usage metadata.
	fill bool
	// tail says how the stream ends after its events.
	tail tail
	// pace is waited before each event (or once before an error reply).
	pace time.Duration
	// count makes this a countTokens reply of tokens.
	count  bool
	tokens int32
}

// tail is how a stream ends once its events are sent.
type tail int

const (
	// tailEnd ends the response normally.
	tailEnd tail = iota
	// tailCut severs the connection without ending the chunked body, which
	// the client sees as a transport error.
	tailCut
	// tailHang keeps the response open until the client goes away.
	tailHang
)

// event is one data event of a stream.
type event struct {
	// resp is a chunk built by a constructor; it is completed and encoded
	// when played. Nil for raw events.
	resp *genai.GenerateContentResponse
	// raw is a payload sent verbatim.
	raw []byte
	// err is a failure to encode a caller's chunk, reported when played so
	// that constructors need not return errors.
	err error
}

// describe names the step for failure messages.
func (st Step) describe() string {
	if st.name == "" {
		return "empty stream"
	}
	return st.name
}

// Text streams each chunk as a separate text event. The last event carries
// finishReason STOP and usage metadata. With no chunks, one final event with
// an empty model content is sent.
func Text(chunks ...string) Step {
	parts := make([]*genai.Part, len(chunks))
	for i, c := range chunks {
		parts[i] = genai.NewPartFromText(c)
	}
	st := Stream(parts...)
	st.name = fmt.Sprintf("Text(%d chunk(s))", len(chunks))
	return st
}

// Stream sends each part as a separate chunk, e.g. a thought, then text, then
// a function call. The last chunk carries finishReason STOP and usage
// metadata; every chunk gets the requested model as modelVersion and a
// response id, as real chunks do.
func Stream(parts ...*genai.Part) Step {
	st := Step{name: fmt.Sprintf("Stream(%d part(s))", len(parts)), fill: true}
	for _, p := range parts {
		st.events = append(st.events, event{resp: modelChunk(p)})
	}
	if len(st.events) == 0 {
		st.events = append(st.events, event{resp: modelChunk()})
	}
	finish(st.events[len(st.events)-1].resp, genai.FinishReasonStop)
	return st
}

// Parts sends all parts in a single final chunk (finishReason STOP, usage
// metadata), the way the API delivers parallel function calls.
func Parts(parts ...*genai.Part) Step {
	c := modelChunk(parts...)
	finish(c, genai.FinishReasonStop)
	return Step{name: fmt.Sprintf("Parts(%d part(s))", len(parts)), fill: true, events: []event{{resp: c}}}
}

// Call sends one function call in a single final chunk. For a call id or a
// thought signature, use [Parts] with a hand-built part.
func Call(name string, args map[string]any) Step {
	st := Parts(genai.NewPartFromFunctionCall(name, args))
	st.name = "Call(" + name + ")"
	return st
}

// Calls sends several function calls in a single final chunk.
func Calls(calls ...*genai.FunctionCall) Step {
	parts := make([]*genai.Part, len(calls))
	for i, c := range calls {
		parts[i] = &genai.Part{FunctionCall: c}
	}
	st := Parts(parts...)
	st.name = fmt.Sprintf("Calls(%d)", len(calls))
	return st
}

// Unfinished streams text chunks and ends the stream cleanly without any
// finishReason, as a truncated stream looks to the client (which reports no
// error for it).
func Unfinished(chunks ...string) Step {
	st := Step{name: fmt.Sprintf("Unfinished(%d chunk(s))", len(chunks)), fill: true}
	for _, c := range chunks {
		st.events = append(st.events, event{resp: modelChunk(genai.NewPartFromText(c))})
	}
	return st
}

// Empty is a stream that sends its headers and ends without any event. The
// client yields no chunk and no error.
func Empty() Step {
	return Step{name: "Empty"}
}

// Chunks streams the given responses verbatim, one event each, without adding
// finish reasons, usage or ids: the test controls every field. They are
// encoded when Chunks is called, so later changes to them are not seen.
func Chunks(resps ...*genai.GenerateContentResponse) Step {
	st := Step{name: fmt.Sprintf("Chunks(%d)", len(resps))}
	for _, r := range resps {
		st.events = append(st.events, encodeChunk(r))
	}
	return st
}

// Events streams each payload verbatim as a "data:" event, for malformed or
// unusual chunks. Payloads must not contain blank lines, which end an event.
func Events(payloads ...string) Step {
	st := Step{name: fmt.Sprintf("Events(%d)", len(payloads))}
	for _, p := range payloads {
		st.events = append(st.events, event{raw: []byte(p)})
	}
	return st
}

// MidStreamError streams text chunks (without a finish reason), then a data
// event holding body, typically an [ErrorBody], then ends the stream. The
// genai client yields the chunks and then the error as a genai.APIError. On
// a unary request the whole call fails with the error's code as HTTP status.
func MidStreamError(chunks []string, body string) Step {
	st := Unfinished(chunks...)
	st.name = fmt.Sprintf("MidStreamError(%d chunk(s))", len(chunks))
	st.events = append(st.events, event{raw: []byte(body)})
	return st
}

// MidStreamCut streams text chunks (without a finish reason), then severs the
// connection in the middle of the chunked body. The genai client yields the
// chunks and then io.ErrUnexpectedEOF. On a unary request the connection is
// dropped before any reply.
func MidStreamCut(chunks ...string) Step {
	st := Unfinished(chunks...)
	st.name = fmt.Sprintf("MidStreamCut(%d chunk(s))", len(chunks))
	st.tail = tailCut
	return st
}

// Hang sends the stream's headers and the given text chunks (without a finish
// reason), then keeps the response open until the client goes away, for
// abort tests. On a unary request nothing is sent before the wait. If the
// client never gives up, the step fails the test after the hang limit (see
// [WithHangLimit]).
func Hang(chunks ...string) Step {
	st := Unfinished(chunks...)
	st.name = fmt.Sprintf("Hang(%d chunk(s))", len(chunks))
	st.tail = tailHang
	return st
}

// Slow paces step: it waits perChunk before each event (before an error
// reply, and per event before a unary reply). The wait ends early when the
// client goes away, and the handler then returns without sending more.
func Slow(step Step, perChunk time.Duration) Step {
	step.name = fmt.Sprintf("Slow(%s, %v)", step.describe(), perChunk)
	step.pace = perChunk
	return step
}

// TokenCount answers a countTokens request (see [Server.EnqueueCountTokens])
// with totalTokens n.
func TokenCount(n int32) Step {
	return Step{name: fmt.Sprintf("TokenCount(%d)", n), count: true, tokens: n}
}

// Error replies with an HTTP status and body verbatim. With a JSON
// {"error":{...}} body the genai client returns the body's fields as a
// genai.APIError; any other body (plain text, an array, even with status 200)
// exercises the client's fallbacks.
func Error(status int, body string) Step {
	return Step{name: fmt.Sprintf("Error(%d)", status), status: status, body: func(string) string { return body }}
}

// APIError replies with HTTP status code and a Google API error body. The
// genai client returns exactly genai.APIError{Code: code, Message: message,
// Status: status, Details: details}.
func APIError(code int, status, message string, details ...map[string]any) Step {
	st := Error(code, ErrorBody(code, status, message, details...))
	st.name = fmt.Sprintf("APIError(%d %s)", code, status)
	return st
}

// CodeAssistError replies with HTTP status code and the error wrapped in a
// JSON array, [{"error":{...}}], as the Code Assist server sends it. The
// genai client cannot decode that shape: it returns a genai.APIError whose
// Code is the HTTP status, whose Status is the HTTP status line (e.g. "429
// Too Many Requests"), whose Message is the raw body and whose Details are
// empty.
func CodeAssistError(code int, status, message string, details ...map[string]any) Step {
	st := Error(code, "["+ErrorBody(code, status, message, details...)+"]")
	st.name = fmt.Sprintf("CodeAssistError(%d %s)", code, status)
	return st
}

// RateLimitPerMinute replies 429 RESOURCE_EXHAUSTED for the free tier's
// per-minute request quota, with QuotaFailure and RetryInfo details as the
// API sends them: a retryable error that says how long to wait.
func RateLimitPerMinute(retryDelay time.Duration) Step {
	return Step{
		name:   "RateLimitPerMinute",
		status: http.StatusTooManyRequests,
		body: func(model string) string {
			return ErrorBody(http.StatusTooManyRequests, "RESOURCE_EXHAUSTED",
				quotaMessage(model, "generate_content_free_tier_requests", "10", retryDelay),
				quotaHelp(),
				QuotaFailure(QuotaViolation{
					Metric: "generativelanguage.googleapis.com/generate_content_free_tier_requests",
					ID:     "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
					Model:  model,
					Value:  "10",
				}),
				RetryInfo(retryDelay))
		},
	}
}

// RateLimitPerDay replies 429 RESOURCE_EXHAUSTED for the free tier's daily
// request quota. Like the real API it also carries a RetryInfo, so a
// classifier must look at the quota id to see that retrying is pointless.
func RateLimitPerDay() Step {
	const delay = 42 * time.Second
	return Step{
		name:   "RateLimitPerDay",
		status: http.StatusTooManyRequests,
		body: func(model string) string {
			return ErrorBody(http.StatusTooManyRequests, "RESOURCE_EXHAUSTED",
				quotaMessage(model, "generate_content_free_tier_requests", "250", delay),
				quotaHelp(),
				QuotaFailure(QuotaViolation{
					Metric: "generativelanguage.googleapis.com/generate_content_free_tier_requests",
					ID:     "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
					Model:  model,
					Value:  "250",
				}),
				RetryInfo(delay))
		},
	}
}

// Unavailable replies 503 UNAVAILABLE with the API's "model is overloaded"
// message.
func Unavailable() Step {
	st := APIError(http.StatusServiceUnavailable, "UNAVAILABLE", "The model is overloaded. Please try again later.")
	st.name = "Unavailable"
	return st
}

// NotFound replies 404 NOT_FOUND with the API's message for an unknown model,
// naming the requested model.
func NotFound() Step {
	return Step{
		name:   "NotFound",
		status: http.StatusNotFound,
		body: func(model string) string {
			return ErrorBody(http.StatusNotFound, "NOT_FOUND", fmt.Sprintf(
				"models/%s is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.", model))
		},
	}
}

// modelChunk is a response chunk with one candidate holding parts.
func modelChunk(parts ...*genai.Part) *genai.GenerateContentResponse {
	return &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{
		Content: &genai.Content{Role: genai.RoleModel, Parts: parts},
	}}}
}

// finish sets the finish reason of c's candidate.
func finish(c *genai.GenerateContentResponse, reason genai.FinishReason) {
	c.Candidates[0].FinishReason = reason
}

// encodeChunk snapshots a caller's chunk as a raw event.
func encodeChunk(r *genai.GenerateContentResponse) event {
	if r == nil {
		return event{err: errors.New("nil chunk in Chunks")}
	}
	c := *r
	// The client fills SDKHTTPResponse itself; it is not part of the wire.
	c.SDKHTTPResponse = nil
	b, err := json.Marshal(&c)
	if err != nil {
		return event{err: fmt.Errorf("encode chunk: %w", err)}
	}
	return event{raw: b}
}
