package sessions

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"slices"
	"strconv"

	"google.golang.org/genai"

	"google.golang.org/adk/v2/session"

	"github.com/agentry-dev/agentry/internal/jsonstr"
)

// appendEvent appends json.Marshal(ev) to dst, byte for byte, written
// without reflection for the fields agentry's events carry: an event's
// text, thoughts, function calls and responses, inline data, usage,
// custom metadata, actions and ids. Rarer values (grounding, citations,
// log probabilities, transcriptions, workflow fields, code execution,
// file data, JSON values of types other than JSON's own) are written by
// encoding/json itself, in place, which gives the same bytes there as
// inside a whole event. On any error the whole event goes through
// json.Marshal, so the error is json.Marshal's too.
//
// The stored form is encoding/json's, so rows written before this encoder
// and after it are read by one decoder; TestEncodeEventMatchesJSON holds
// it to json.Marshal over events that fill every field, and fails on a
// field ADK or genai add that it does not write.
func appendEvent(dst []byte, ev *session.Event) ([]byte, error) {
	e := eventEncoder{b: dst}
	return e.encode(ev)
}

// encode appends ev to e.b and returns the result (see appendEvent).
func (e *eventEncoder) encode(ev *session.Event) ([]byte, error) {
	start := len(e.b)
	e.err = nil
	e.event(ev)
	if e.err != nil {
		raw, err := json.Marshal(ev)
		e.b = append(e.b[:start], raw...)
		return e.b, err
	}
	return e.b, nil
}

// maxPooledBuffer bounds the encoding buffers a Store keeps for reuse:
// one huge tool output should not stay allocated.
const maxPooledBuffer = 1 << 20

// encode returns ev as stored, json.Marshal's text (see appendEvent),
// written by an encoder the Store reuses: a tool's output would otherwise
// grow a new buffer several times per append.
func (s *Store) encode(ev *session.Event) (string, error) {
	e, _ := s.encoders.Get().(*eventEncoder)
	if e == nil {
		e = new(eventEncoder)
	}
	e.b = e.b[:0]
	b, err := e.encode(ev)
	data := string(b)
	if cap(e.b) <= maxPooledBuffer {
		s.encoders.Put(e)
	}
	if err != nil {
		return "", err
	}
	return data, nil
}

// eventEncoder appends JSON to b; the first error stops it.
type eventEncoder struct {
	b   []byte
	err error
	// keys is scratch space for sorting map keys; nested maps use the
	// part after their parent's keys.
	keys []string
}

// field starts a member: a comma unless it is the object's first, then
// the quoted name and colon (the name needs no escaping).
func (e *eventEncoder) field(first *bool, name string) {
	if !*first {
		e.b = append(e.b, ',')
	}
	*first = false
	e.b = append(e.b, '"')
	e.b = append(e.b, name...)
	e.b = append(e.b, '"', ':')
}

func (e *eventEncoder) str(s string) { e.b = jsonstr.Append(e.b, s, jsonstr.HTMLSafe) }

// strField writes a string member that is omitted when empty.
func (e *eventEncoder) strField(first *bool, name, s string) {
	if s != "" {
		e.field(first, name)
		e.str(s)
	}
}

// boolField writes a bool member that is omitted when false.
func (e *eventEncoder) boolField(first *bool, name string, v bool) {
	if v {
		e.field(first, name)
		e.b = append(e.b, "true"...)
	}
}

// int32Field writes an integer member that is omitted when zero.
func (e *eventEncoder) int32Field(first *bool, name string, v int32) {
	if v != 0 {
		e.field(first, name)
		e.b = strconv.AppendInt(e.b, int64(v), 10)
	}
}

// bytes writes a []byte as encoding/json does: standard base64.
func (e *eventEncoder) bytes(v []byte) {
	e.b = append(e.b, '"')
	e.b = base64.StdEncoding.AppendEncode(e.b, v)
	e.b = append(e.b, '"')
}

// marshal writes v with encoding/json.
func (e *eventEncoder) marshal(v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		e.err = err
		return
	}
	e.b = append(e.b, raw...)
}

// float writes a float64 in encoding/json's format.
func (e *eventEncoder) float(f float64) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		e.marshal(f) // json's error
		return
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	e.b = strconv.AppendFloat(e.b, f, format, -1, 64)
	if n := len(e.b); format == 'e' && n >= 4 && e.b[n-4] == 'e' && e.b[n-3] == '-' && e.b[n-2] == '0' {
		e.b[n-2] = e.b[n-1] // e-07 is written e-7
		e.b = e.b[:n-1]
	}
}

// value writes a JSON value held in an any: JSON's own types (what a
// decoded document holds) here, others by encoding/json.
func (e *eventEncoder) value(v any) {
	switch x := v.(type) {
	case nil:
		e.b = append(e.b, "null"...)
	case string:
		e.str(x)
	case bool:
		e.b = strconv.AppendBool(e.b, x)
	case float64:
		e.float(x)
	case int:
		e.b = strconv.AppendInt(e.b, int64(x), 10)
	case int64:
		e.b = strconv.AppendInt(e.b, x, 10)
	case map[string]any:
		e.object(x)
	case []any:
		if x == nil {
			e.b = append(e.b, "null"...)
			return
		}
		e.b = append(e.b, '[')
		for i, el := range x {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.value(el)
		}
		e.b = append(e.b, ']')
	case []string:
		e.strings(x)
	default:
		e.marshal(v)
	}
}

// strings writes a []string; nil is null.
func (e *eventEncoder) strings(x []string) {
	if x == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(e.b, '[')
	for i, s := range x {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.str(s)
	}
	e.b = append(e.b, ']')
}

// sortedKeys returns m's keys sorted, in the scratch space after start;
// the caller truncates e.keys to start when done.
func sortedKeys[V any](e *eventEncoder, m map[string]V) []string {
	start := len(e.keys)
	for k := range m {
		e.keys = append(e.keys, k)
	}
	keys := e.keys[start:]
	slices.Sort(keys)
	return keys
}

// object writes a map[string]any with its keys sorted; nil is null.
func (e *eventEncoder) object(m map[string]any) {
	if m == nil {
		e.b = append(e.b, "null"...)
		return
	}
	start := len(e.keys)
	keys := sortedKeys(e, m)
	e.b = append(e.b, '{')
	for i, k := range keys {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.str(k)
		e.b = append(e.b, ':')
		e.value(m[k])
	}
	e.b = append(e.b, '}')
	e.keys = e.keys[:start]
}

// int64Object writes a map[string]int64 with its keys sorted; nil is
// null.
func (e *eventEncoder) int64Object(m map[string]int64) {
	if m == nil {
		e.b = append(e.b, "null"...)
		return
	}
	start := len(e.keys)
	keys := sortedKeys(e, m)
	e.b = append(e.b, '{')
	for i, k := range keys {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.str(k)
		e.b = append(e.b, ':')
		e.b = strconv.AppendInt(e.b, m[k], 10)
	}
	e.b = append(e.b, '}')
	e.keys = e.keys[:start]
}

// event writes a session.Event: model.LLMResponse's fields (embedded, so
// first), then the event's own.
func (e *eventEncoder) event(ev *session.Event) {
	first := true
	e.b = append(e.b, '{')
	r := &ev.LLMResponse
	if r.Content != nil {
		e.field(&first, "content")
		e.content(r.Content)
	}
	if r.CitationMetadata != nil {
		e.field(&first, "citationMetadata")
		e.marshal(r.CitationMetadata)
	}
	if r.GroundingMetadata != nil {
		e.field(&first, "groundingMetadata")
		e.marshal(r.GroundingMetadata)
	}
	if r.UsageMetadata != nil {
		e.field(&first, "usageMetadata")
		e.usage(r.UsageMetadata)
	}
	if len(r.CustomMetadata) > 0 {
		e.field(&first, "customMetadata")
		e.object(r.CustomMetadata)
	}
	if r.LogprobsResult != nil {
		e.field(&first, "logprobsResult")
		e.marshal(r.LogprobsResult)
	}
	if r.InputTranscription != nil {
		e.field(&first, "inputTranscription")
		e.marshal(r.InputTranscription)
	}
	if r.OutputTranscription != nil {
		e.field(&first, "outputTranscription")
		e.marshal(r.OutputTranscription)
	}
	e.strField(&first, "modelVersion", r.ModelVersion)
	e.boolField(&first, "partial", r.Partial)
	e.boolField(&first, "turnComplete", r.TurnComplete)
	e.boolField(&first, "interrupted", r.Interrupted)
	e.strField(&first, "sessionResumptionHandle", r.SessionResumptionHandle)
	e.strField(&first, "errorCode", r.ErrorCode)
	e.strField(&first, "errorMessage", r.ErrorMessage)
	e.strField(&first, "finishReason", string(r.FinishReason))
	if r.AvgLogprobs != 0 {
		e.field(&first, "avgLogprobs")
		e.float(r.AvgLogprobs)
	}

	e.field(&first, "id")
	e.str(ev.ID)
	e.field(&first, "timestamp")
	e.b = append(e.b, '"')
	var err error
	if e.b, err = ev.Timestamp.AppendText(e.b); err != nil {
		e.err = err
	}
	e.b = append(e.b, '"')
	e.field(&first, "invocationId")
	e.str(ev.InvocationID)
	e.strField(&first, "branch", ev.Branch)
	e.strField(&first, "isolationScope", ev.IsolationScope)
	e.field(&first, "author")
	e.str(ev.Author)
	e.field(&first, "actions")
	e.actions(&ev.Actions)
	if len(ev.LongRunningToolIDs) > 0 {
		e.field(&first, "longRunningToolIds")
		e.strings(ev.LongRunningToolIDs)
	}
	if len(ev.Routes) > 0 {
		e.field(&first, "routes")
		e.strings(ev.Routes)
	}
	if ev.RequestedInput != nil {
		e.field(&first, "requestedInput")
		e.marshal(ev.RequestedInput)
	}
	if ev.Output != nil {
		e.field(&first, "output")
		e.value(ev.Output)
	}
	if ev.NodeInfo != nil {
		e.field(&first, "nodeInfo")
		e.marshal(ev.NodeInfo)
	}
	e.b = append(e.b, '}')
}

// actions writes session.EventActions as its MarshalJSON does: the
// promoted fields, then the state and artifact deltas, each omitted when
// nil and written when empty.
func (e *eventEncoder) actions(a *session.EventActions) {
	first := true
	e.b = append(e.b, '{')
	if len(a.RequestedToolConfirmations) > 0 {
		e.field(&first, "requestedToolConfirmations")
		e.marshal(a.RequestedToolConfirmations)
	}
	e.boolField(&first, "skipSummarization", a.SkipSummarization)
	e.strField(&first, "transferToAgent", a.TransferToAgent)
	e.boolField(&first, "escalate", a.Escalate)
	if a.StateDelta != nil {
		e.field(&first, "stateDelta")
		e.object(a.StateDelta)
	}
	if a.ArtifactDelta != nil {
		e.field(&first, "artifactDelta")
		e.int64Object(a.ArtifactDelta)
	}
	e.b = append(e.b, '}')
}

func (e *eventEncoder) content(c *genai.Content) {
	first := true
	e.b = append(e.b, '{')
	if len(c.Parts) > 0 {
		e.field(&first, "parts")
		e.b = append(e.b, '[')
		for i, p := range c.Parts {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.part(p)
		}
		e.b = append(e.b, ']')
	}
	e.strField(&first, "role", c.Role)
	e.b = append(e.b, '}')
}

func (e *eventEncoder) part(p *genai.Part) {
	if p == nil {
		e.b = append(e.b, "null"...)
		return
	}
	first := true
	e.b = append(e.b, '{')
	if p.MediaResolution != nil {
		e.field(&first, "mediaResolution")
		e.marshal(p.MediaResolution)
	}
	if p.CodeExecutionResult != nil {
		e.field(&first, "codeExecutionResult")
		e.marshal(p.CodeExecutionResult)
	}
	if p.ExecutableCode != nil {
		e.field(&first, "executableCode")
		e.marshal(p.ExecutableCode)
	}
	if p.FileData != nil {
		e.field(&first, "fileData")
		e.marshal(p.FileData)
	}
	if p.FunctionCall != nil {
		e.field(&first, "functionCall")
		e.functionCall(p.FunctionCall)
	}
	if p.FunctionResponse != nil {
		e.field(&first, "functionResponse")
		e.functionResponse(p.FunctionResponse)
	}
	if p.InlineData != nil {
		e.field(&first, "inlineData")
		e.blob(p.InlineData)
	}
	e.strField(&first, "text", p.Text)
	e.boolField(&first, "thought", p.Thought)
	if len(p.ThoughtSignature) > 0 {
		e.field(&first, "thoughtSignature")
		e.bytes(p.ThoughtSignature)
	}
	if p.VideoMetadata != nil {
		e.field(&first, "videoMetadata")
		e.marshal(p.VideoMetadata)
	}
	if p.ToolCall != nil {
		e.field(&first, "toolCall")
		e.marshal(p.ToolCall)
	}
	if p.ToolResponse != nil {
		e.field(&first, "toolResponse")
		e.marshal(p.ToolResponse)
	}
	if len(p.PartMetadata) > 0 {
		e.field(&first, "partMetadata")
		e.object(p.PartMetadata)
	}
	if p.AudioTranscription != nil {
		e.field(&first, "audioTranscription")
		e.marshal(p.AudioTranscription)
	}
	e.strField(&first, "mediaProcessing", string(p.MediaProcessing))
	if p.SpeechMetadata != nil {
		e.field(&first, "speechMetadata")
		e.marshal(p.SpeechMetadata)
	}
	e.b = append(e.b, '}')
}

// willContinue writes a *bool member that is omitted when nil.
func (e *eventEncoder) willContinue(first *bool, v *bool) {
	if v != nil {
		e.field(first, "willContinue")
		e.b = strconv.AppendBool(e.b, *v)
	}
}

func (e *eventEncoder) functionCall(c *genai.FunctionCall) {
	first := true
	e.b = append(e.b, '{')
	e.strField(&first, "id", c.ID)
	if len(c.Args) > 0 {
		e.field(&first, "args")
		e.object(c.Args)
	}
	e.strField(&first, "name", c.Name)
	if len(c.PartialArgs) > 0 {
		e.field(&first, "partialArgs")
		e.marshal(c.PartialArgs)
	}
	e.willContinue(&first, c.WillContinue)
	e.b = append(e.b, '}')
}

func (e *eventEncoder) functionResponse(r *genai.FunctionResponse) {
	first := true
	e.b = append(e.b, '{')
	e.willContinue(&first, r.WillContinue)
	e.strField(&first, "scheduling", string(r.Scheduling))
	if len(r.Parts) > 0 {
		e.field(&first, "parts")
		e.marshal(r.Parts)
	}
	e.strField(&first, "id", r.ID)
	e.strField(&first, "name", r.Name)
	if len(r.Response) > 0 {
		e.field(&first, "response")
		e.object(r.Response)
	}
	e.b = append(e.b, '}')
}

func (e *eventEncoder) blob(b *genai.Blob) {
	first := true
	e.b = append(e.b, '{')
	if len(b.Data) > 0 {
		e.field(&first, "data")
		e.bytes(b.Data)
	}
	e.strField(&first, "displayName", b.DisplayName)
	e.strField(&first, "mimeType", b.MIMEType)
	e.b = append(e.b, '}')
}

func (e *eventEncoder) usage(u *genai.GenerateContentResponseUsageMetadata) {
	first := true
	e.b = append(e.b, '{')
	e.modalities(&first, "cacheTokensDetails", u.CacheTokensDetails)
	e.int32Field(&first, "cachedContentTokenCount", u.CachedContentTokenCount)
	e.int32Field(&first, "candidatesTokenCount", u.CandidatesTokenCount)
	e.modalities(&first, "candidatesTokensDetails", u.CandidatesTokensDetails)
	e.int32Field(&first, "promptTokenCount", u.PromptTokenCount)
	e.modalities(&first, "promptTokensDetails", u.PromptTokensDetails)
	e.int32Field(&first, "thoughtsTokenCount", u.ThoughtsTokenCount)
	e.int32Field(&first, "toolUsePromptTokenCount", u.ToolUsePromptTokenCount)
	e.modalities(&first, "toolUsePromptTokensDetails", u.ToolUsePromptTokensDetails)
	e.int32Field(&first, "totalTokenCount", u.TotalTokenCount)
	e.strField(&first, "trafficType", string(u.TrafficType))
	e.b = append(e.b, '}')
}

// modalities writes a per-modality token count member, omitted when
// empty.
func (e *eventEncoder) modalities(first *bool, name string, ms []*genai.ModalityTokenCount) {
	if len(ms) == 0 {
		return
	}
	e.field(first, name)
	e.b = append(e.b, '[')
	for i, m := range ms {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		if m == nil {
			e.b = append(e.b, "null"...)
			continue
		}
		f := true
		e.b = append(e.b, '{')
		e.strField(&f, "modality", string(m.Modality))
		e.int32Field(&f, "tokenCount", m.TokenCount)
		e.b = append(e.b, '}')
	}
	e.b = append(e.b, ']')
}
