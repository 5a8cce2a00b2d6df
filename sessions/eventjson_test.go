package sessions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"google.golang.org/genai"

	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool/toolconfirmation"
)

// variedEvents are events of every kind a session holds, each with
// values a JSON round trip gives back unchanged (float64 numbers, UTC
// times, valid UTF-8), so that they can be compared after storage.
func variedEvents() []*session.Event {
	at := time.Date(2026, 3, 4, 5, 6, 7, 891234567, time.UTC)
	fps := 24.0
	yes, no := true, false
	return []*session.Event{
		// A prompt; no actions maps, as an event built by hand has none.
		{ID: "e-prompt", InvocationID: "inv-1", Author: "user", Timestamp: at,
			LLMResponse: model.LLMResponse{Content: genai.NewContentFromText("Fix <main.go> & \"run\" the tests\n\tplease — ✓ 🙂", genai.RoleUser)}},
		// A thought with its signature, text, and a call with nested
		// arguments; usage per modality; empty actions maps.
		{ID: "e-call", InvocationID: "inv-1", Author: "agentry", Timestamp: at.Add(time.Second),
			LLMResponse: model.LLMResponse{
				Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
					{Text: "**Planning** the fix", Thought: true, ThoughtSignature: []byte{0, 1, 2, 0xfe, 0xff, '<', '>'}},
					{Text: "I'll read the file."},
					{FunctionCall: &genai.FunctionCall{ID: "call-1", Name: "read_file", Args: map[string]any{
						"absolute_path": "/w/main.go", "offset": 0.0, "limit": 2000.0, "ratio": 0.1, "tiny": 1e-7, "huge": 1e21, "neg": -3.25,
						"flags":  []any{true, false, nil, "x", 1.5, []any{}, map[string]any{}},
						"nested": map[string]any{"b": map[string]any{"c": []any{"<&>", "\u2028"}}, "a": nil},
					}}, ThoughtSignature: []byte("sig")},
				}},
				UsageMetadata: &genai.GenerateContentResponseUsageMetadata{
					PromptTokenCount: 12000, CandidatesTokenCount: 80, ThoughtsTokenCount: 40, CachedContentTokenCount: 8000, ToolUsePromptTokenCount: 3, TotalTokenCount: 12120,
					PromptTokensDetails:     []*genai.ModalityTokenCount{{Modality: genai.MediaModalityText, TokenCount: 11000}, {Modality: genai.MediaModalityImage, TokenCount: 1000}},
					CacheTokensDetails:      []*genai.ModalityTokenCount{{Modality: genai.MediaModalityText, TokenCount: 8000}},
					CandidatesTokensDetails: []*genai.ModalityTokenCount{{Modality: genai.MediaModalityText}},
					TrafficType:             genai.TrafficTypeOnDemand,
				},
				ModelVersion: "gemini-2.5-pro", FinishReason: genai.FinishReasonStop, AvgLogprobs: -0.000001234,
			},
			Actions: session.EventActions{StateDelta: map[string]any{}, ArtifactDelta: map[string]int64{}}},
		// A function response with a tool's output and a long-running id.
		{ID: "e-response", InvocationID: "inv-1", Author: "agentry", Timestamp: at.Add(2 * time.Second),
			LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
				{FunctionResponse: &genai.FunctionResponse{ID: "call-1", Name: "read_file", Response: map[string]any{
					"output": "package main\n\nfunc main() {\n\tif a < b && c > d {\n\t\tprintln(\"\\\\\")\n\t}\n}\n\x01\x1f",
				}}},
				{FunctionResponse: &genai.FunctionResponse{ID: "call-2", Name: "run_shell_command", WillContinue: &yes, Scheduling: genai.FunctionResponseSchedulingWhenIdle,
					Response: map[string]any{"error": "exit status 1"},
					Parts:    []*genai.FunctionResponsePart{{InlineData: &genai.FunctionResponseBlob{MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}}}}}},
			}}},
			LongRunningToolIDs: []string{"call-2", "call-3"},
			Actions:            session.EventActions{StateDelta: map[string]any{}, ArtifactDelta: map[string]int64{}}},
		// Inline data and the other kinds of part.
		{ID: "e-media", InvocationID: "inv-2", Author: "user", Timestamp: at.Add(3 * time.Second),
			LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
				{InlineData: &genai.Blob{MIMEType: "image/png", DisplayName: "shot.png", Data: bytes.Repeat([]byte{0, 0x89, 'P', 0xff}, 50)}},
				{FileData: &genai.FileData{FileURI: "gs://b/o", MIMEType: "application/pdf", DisplayName: "o.pdf"}},
				{ExecutableCode: &genai.ExecutableCode{Code: "print(1)", Language: genai.LanguagePython, ID: "x1"}},
				{CodeExecutionResult: &genai.CodeExecutionResult{Outcome: genai.OutcomeOK, Output: "1\n", ID: "x1"}},
				{Text: "clip", VideoMetadata: &genai.VideoMetadata{StartOffset: time.Second, EndOffset: 3 * time.Second, FPS: &fps}},
				{Text: "meta", PartMetadata: map[string]any{"source": "paste", "n": 2.0}, MediaProcessing: genai.MediaProcessing("MEDIA_PROCESSING_DEFAULT")},
				{MediaResolution: &genai.PartMediaResolution{Level: genai.PartMediaResolutionLevel("MEDIA_RESOLUTION_HIGH")}},
			}}}},
		// State and artifact changes in every scope, and the other actions.
		{ID: "e-state", InvocationID: "inv-2", Author: "agentry", Timestamp: at.Add(4 * time.Second), Branch: "agentry.coder", IsolationScope: "task-7",
			Actions: session.EventActions{
				StateDelta:                 map[string]any{"k": "v", "n": 3.5, "list": []any{"a", 1.0}, "obj": map[string]any{"z": true}, "app:theme": "dark", "user:name": "Ada", "nil": nil},
				ArtifactDelta:              map[string]int64{"report.md": 2, "a<b>.txt": 0},
				RequestedToolConfirmations: map[string]toolconfirmation.ToolConfirmation{"call-9": {Hint: "Allow rm -rf?", Payload: map[string]any{"cmd": "rm"}}},
				SkipSummarization:          true, TransferToAgent: "reviewer", Escalate: true,
			}},
		// A model error.
		{ID: "e-error", InvocationID: "inv-3", Author: "agentry", Timestamp: at.Add(5 * time.Second),
			LLMResponse: model.LLMResponse{ErrorCode: "RESOURCE_EXHAUSTED", ErrorMessage: "Quota exceeded for <model> & more",
				FinishReason: genai.FinishReasonMalformedFunctionCall, TurnComplete: true, Interrupted: true, SessionResumptionHandle: "resume-1"}},
		// Grounding, citations, log probabilities, transcriptions and
		// custom metadata.
		{ID: "e-grounded", InvocationID: "inv-4", Author: "agentry", Timestamp: at.Add(6 * time.Second),
			LLMResponse: model.LLMResponse{
				Content: genai.NewContentFromText("Go 1.26 was released in February.", genai.RoleModel),
				GroundingMetadata: &genai.GroundingMetadata{
					WebSearchQueries: []string{"go 1.26 release"},
					GroundingChunks:  []*genai.GroundingChunk{{Web: &genai.GroundingChunkWeb{URI: "https://go.dev/doc/go1.26", Title: "Go 1.26", Domain: "go.dev"}}},
					GroundingSupports: []*genai.GroundingSupport{{GroundingChunkIndices: []int32{0}, ConfidenceScores: []float32{0.9},
						Segment: &genai.Segment{StartIndex: 0, EndIndex: 33, Text: "Go 1.26 was released in February."}}},
					SearchEntryPoint: &genai.SearchEntryPoint{RenderedContent: "<div>search</div>"},
				},
				CitationMetadata: &genai.CitationMetadata{Citations: []*genai.Citation{{Title: "t", URI: "https://example.com", StartIndex: 1, EndIndex: 4, License: "mit"}}},
				LogprobsResult: &genai.LogprobsResult{ChosenCandidates: []*genai.LogprobsResultCandidate{{Token: "Go", LogProbability: -0.5}},
					TopCandidates: []*genai.LogprobsResultTopCandidates{{Candidates: []*genai.LogprobsResultCandidate{{Token: "Go", LogProbability: -0.5}}}}},
				InputTranscription:  &genai.Transcription{Text: "hello", Finished: true},
				OutputTranscription: &genai.Transcription{Text: "hi"},
				CustomMetadata:      map[string]any{"routing": map[string]any{"model": "gemini-2.5-flash", "fallback": false, "attempt": 2.0}, "a2a:task": "t-1"},
			}},
		// Workflow fields.
		{ID: "e-workflow", InvocationID: "inv-5", Author: "flow", Timestamp: at.Add(7 * time.Second),
			Routes:         []string{"approve", "reject"},
			RequestedInput: &session.RequestInput{InterruptID: "ask-1", Message: "Name?", Payload: map[string]any{"doc": "x"}},
			Output:         map[string]any{"result": "ok", "score": 0.5, "items": []any{1.0, "two"}},
			NodeInfo:       &session.NodeInfo{Path: "a/b@1", MessageAsOutput: true, OutputFor: []string{"a"}}},
		{ID: "e-output-text", InvocationID: "inv-5", Author: "flow", Timestamp: at.Add(8 * time.Second), Output: "plain <text>"},
		// A call that streams its arguments, and a nil part.
		{ID: "e-partial-args", InvocationID: "inv-6", Author: "agentry", Timestamp: at.Add(9 * time.Second),
			LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
				{FunctionCall: &genai.FunctionCall{Name: "write_file", WillContinue: &no, PartialArgs: []*genai.PartialArg{{JsonPath: "$.content", StringValue: "abc", WillContinue: &yes}}}},
				nil,
			}}}},
		// Nearly empty: no author, no content, a content without parts.
		{ID: "e-bare", Timestamp: at.Add(10 * time.Second), LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel}}},
	}
}

// hostileEvents have values encoding/json changes on the way (invalid
// UTF-8, non-UTC zones, values of Go types JSON does not have) or refuses
// (NaN, years past 9999): the bytes, or the error, must still be
// json.Marshal's.
func hostileEvents() []*session.Event {
	at := time.Date(2026, 3, 4, 5, 6, 7, 1, time.FixedZone("CET", 3600))
	type custom struct {
		A string `json:"a"`
		B []byte
	}
	return []*session.Event{
		{ID: "bad-\xff-utf8", Author: "\xfe", Timestamp: at, LLMResponse: model.LLMResponse{Content: genai.NewContentFromText("x\xffy \u2028 \u2029 \x7f", genai.RoleModel)}},
		{ID: "go-types", Timestamp: at, LLMResponse: model.LLMResponse{CustomMetadata: map[string]any{
			"int": 7, "int64": int64(-9), "int32": int32(3), "uint": uint(4), "f32": float32(0.1), "role": genai.Role("model"),
			"bytes": []byte("raw"), "strings": []string{"a", "<b>"}, "nilStrings": []string(nil), "nilMap": map[string]any(nil), "nilList": []any(nil),
			"struct": custom{A: "<", B: []byte{1}}, "ptr": &custom{}, "number": json.Number("12.5"), "raw": json.RawMessage(`{"z": 1, "a": [ 2 ]}`),
			"time": at, "duration": time.Second, "part": genai.NewPartFromText("t"), "intMap": map[int]string{2: "b", 10: "a"},
		}}},
		{ID: "nan", Timestamp: at, LLMResponse: model.LLMResponse{AvgLogprobs: math.NaN()}},
		{ID: "inf-arg", Timestamp: at, LLMResponse: model.LLMResponse{Content: &genai.Content{Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Args: map[string]any{"x": math.Inf(1)}}}}}}},
		{ID: "year-10000", Timestamp: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{ID: "zero-time"},
		{ID: "chan", Output: make(chan int)},
	}
}

// checkEncoding fails t unless appendEvent writes what json.Marshal
// writes for ev, or fails as it fails; it also checks that appendEvent
// appends after what dst holds. It reports whether ev was encoded.
func checkEncoding(t *testing.T, name string, ev *session.Event) bool {
	t.Helper()
	want, wantErr := json.Marshal(ev)
	got, err := appendEvent(nil, ev)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%s: appendEvent error %v, json.Marshal error %v", name, err, wantErr)
	}
	if wantErr != nil {
		return false
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		lo := max(0, i-60)
		t.Fatalf("%s: appendEvent differs from json.Marshal at byte %d:\n got  …%s\n want …%s", name, i, got[lo:min(len(got), i+60)], want[lo:min(len(want), i+60)])
	}
	prefix := []byte("prefix")
	if got, _ := appendEvent(prefix, ev); !bytes.Equal(got, append(prefix, want...)) {
		t.Fatalf("%s: appendEvent after a prefix gives %q", name, got)
	}
	return true
}

// TestEncodeEventMatchesJSON: appendEvent writes json.Marshal's bytes for
// events of every kind, and for events whose values json.Marshal changes
// or refuses.
func TestEncodeEventMatchesJSON(t *testing.T) {
	for _, ev := range append(variedEvents(), hostileEvents()...) {
		checkEncoding(t, ev.ID, ev)
	}
	// After trimTemp, as AppendEvent encodes it.
	ev := variedEvents()[4]
	ev.Actions.StateDelta["temp:scratch"] = 1.0
	checkEncoding(t, "trimmed", trimTemp(ev))
}

// TestEncodeEventRandom fills every field of session.Event, and of the
// types appendEvent writes itself, with random values, thousands of times,
// and requires json.Marshal's bytes each time. A field ADK or genai add
// is filled too, so appendEvent must learn to write it before this test
// passes; the test also fails if some field of those types was never
// filled.
func TestEncodeEventRandom(t *testing.T) {
	const n = 3000
	f := &filler{rng: rand.New(rand.NewPCG(7, 11)), covered: map[string]bool{}}
	encoded := 0
	for i := range n {
		ev := new(session.Event)
		f.fill(reflect.ValueOf(ev).Elem(), 0)
		if checkEncoding(t, fmt.Sprintf("random event %d", i), ev) {
			encoded++
		}
	}
	// Some values are refused (NaN, years past 9999); most events must
	// still be compared byte for byte.
	if encoded < n*3/4 {
		t.Errorf("only %d of %d random events could be encoded", encoded, n)
	}
	for _, typ := range handWritten() {
		for i := range typ.NumField() {
			if fd := typ.Field(i); fd.IsExported() && !f.covered[typ.String()+"."+fd.Name] {
				t.Errorf("field %s.%s was never filled", typ, fd.Name)
			}
		}
	}
}

// handWritten are the struct types appendEvent writes field by field.
func handWritten() []reflect.Type {
	return []reflect.Type{
		reflect.TypeFor[session.Event](), reflect.TypeFor[model.LLMResponse](), reflect.TypeFor[session.EventActions](),
		reflect.TypeFor[genai.Content](), reflect.TypeFor[genai.Part](), reflect.TypeFor[genai.FunctionCall](),
		reflect.TypeFor[genai.FunctionResponse](), reflect.TypeFor[genai.Blob](),
		reflect.TypeFor[genai.GenerateContentResponseUsageMetadata](), reflect.TypeFor[genai.ModalityTokenCount](),
	}
}

// filler sets values to random ones, recording which fields of the
// hand-written types it set.
type filler struct {
	rng     *rand.Rand
	covered map[string]bool
}

// maxFillDepth bounds the nesting of structs, which count one level for a
// hand-written type and two for another, so that recursive types
// (schemas) stay small.
const maxFillDepth = 8

var fillStrings = []string{
	"", "a", "model", "hello world", `<b>bold</b> & "quoted"`, "line\nbreak\ttab\rcr\b\f", "\u2028\u2029",
	"é 中文 🙂", "\x00\x01\x1f\x7f", "bad \xff\xfe utf8", `back\slash`, "app:k", "user:k", "temp:k",
	strings.Repeat("long text ", 40),
}

func (f *filler) str() string { return fillStrings[f.rng.IntN(len(fillStrings))] }

func (f *filler) float() float64 {
	switch f.rng.IntN(12) {
	case 0:
		return 0
	case 1:
		return 1e-7 * f.rng.Float64()
	case 2:
		return 1e21 * (1 + f.rng.Float64())
	case 3:
		return -f.rng.Float64()
	case 4:
		return float64(f.rng.IntN(1000))
	case 5:
		return math.SmallestNonzeroFloat64
	case 6:
		if f.rng.IntN(20) == 0 {
			return math.NaN()
		}
		return 123.456
	default:
		return f.rng.NormFloat64() * 1000
	}
}

// jsonValue returns a random value for an any: mostly JSON's own types,
// sometimes others.
func (f *filler) jsonValue(depth int) any {
	if depth > maxFillDepth {
		return nil
	}
	switch f.rng.IntN(14) {
	case 0:
		return nil
	case 1, 2:
		return f.str()
	case 3:
		return f.rng.IntN(2) == 0
	case 4, 5:
		return f.float()
	case 6, 7:
		if f.rng.IntN(8) == 0 {
			return map[string]any(nil)
		}
		m := map[string]any{}
		for range f.rng.IntN(4) {
			m[f.str()] = f.jsonValue(depth + 1)
		}
		return m
	case 8, 9:
		if f.rng.IntN(8) == 0 {
			return []any(nil)
		}
		l := []any{}
		for range f.rng.IntN(4) {
			l = append(l, f.jsonValue(depth+1))
		}
		return l
	case 10:
		return []string{f.str(), f.str()}
	case 11:
		return f.rng.IntN(2000) - 1000
	case 12:
		return int64(f.rng.Uint64())
	default:
		others := []any{float32(0.1), genai.Role("user"), []byte("raw"), genai.NewPartFromText(f.str()), time.Duration(f.rng.IntN(1e9)), json.Number("1.5e3")}
		return others[f.rng.IntN(len(others))]
	}
}

// fill sets v, settable, to a random value.
func (f *filler) fill(v reflect.Value, depth int) {
	if depth > maxFillDepth {
		return
	}
	typ := v.Type()
	if typ == reflect.TypeFor[time.Time]() {
		zones := []*time.Location{time.UTC, time.FixedZone("X", -5*3600), time.FixedZone("Y", 5*3600+1800)}
		t := time.Unix(f.rng.Int64N(4e9), f.rng.Int64N(1e9)).In(zones[f.rng.IntN(len(zones))])
		switch f.rng.IntN(100) {
		case 0, 1, 2, 3, 4:
			t = time.Time{}
		case 5:
			t = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) // json refuses
		}
		v.Set(reflect.ValueOf(t))
		return
	}
	if typ == reflect.TypeFor[jsonschema.Schema]() {
		// Written by encoding/json in any case; random ones are mostly
		// refused by its MarshalJSON.
		v.Set(reflect.ValueOf(jsonschema.Schema{Type: "object", Description: f.str(),
			Properties: map[string]*jsonschema.Schema{f.str(): {Type: "string"}}}))
		return
	}
	switch typ.Kind() {
	case reflect.Pointer:
		if f.rng.IntN(4) == 0 {
			return
		}
		p := reflect.New(typ.Elem())
		f.fill(p.Elem(), depth)
		v.Set(p)
	case reflect.Struct:
		hand := false
		for _, h := range handWritten() {
			hand = hand || h == typ
		}
		if depth++; !hand {
			depth++
		}
		if depth > maxFillDepth {
			return
		}
		for i := range typ.NumField() {
			fd := typ.Field(i)
			if !fd.IsExported() {
				continue
			}
			// The hand-written types get most fields set, so that
			// every field is met with others around it.
			if f.rng.IntN(10) < 3 && !(fd.Anonymous && hand) {
				continue
			}
			f.fill(v.Field(i), depth)
			if hand && !v.Field(i).IsZero() {
				f.covered[typ.String()+"."+fd.Name] = true
			}
		}
	case reflect.Slice:
		switch f.rng.IntN(6) {
		case 0:
			return
		case 1:
			v.Set(reflect.MakeSlice(typ, 0, 0))
			return
		}
		if typ.Elem().Kind() == reflect.Uint8 {
			b := make([]byte, f.rng.IntN(40))
			for i := range b {
				b[i] = byte(f.rng.IntN(256))
			}
			v.SetBytes(b)
			return
		}
		s := reflect.MakeSlice(typ, 1+f.rng.IntN(3), 3)
		for i := range s.Len() {
			f.fill(s.Index(i), depth)
		}
		v.Set(s)
	case reflect.Map:
		switch f.rng.IntN(6) {
		case 0:
			return
		case 1:
			v.Set(reflect.MakeMap(typ))
			return
		}
		m := reflect.MakeMap(typ)
		for range 1 + f.rng.IntN(4) {
			k, e := reflect.New(typ.Key()).Elem(), reflect.New(typ.Elem()).Elem()
			f.fill(k, depth)
			f.fill(e, depth)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Interface:
		if typ.NumMethod() == 0 {
			if x := f.jsonValue(depth); x != nil {
				v.Set(reflect.ValueOf(x))
			}
		}
	case reflect.String:
		v.SetString(f.str())
	case reflect.Bool:
		v.SetBool(f.rng.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := f.rng.Int64N(2000) - 1000
		if f.rng.IntN(4) == 0 {
			n = int64(f.rng.Uint64())
		}
		if v.OverflowInt(n) {
			n = int64(int8(n))
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(f.rng.IntN(200)))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(f.float())
	case reflect.Array:
		for i := range v.Len() {
			f.fill(v.Index(i), depth)
		}
	}
}

// TestLoadsRowsOfJSONMarshal: rows written before appendEvent, by
// json.Marshal (testdata/events-v1.jsonl holds variedEvents as an earlier
// Store stored them), load unchanged, and appendEvent writes the same
// bytes again.
func TestLoadsRowsOfJSONMarshal(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "events-v1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	want := variedEvents()
	if len(lines) != len(want) {
		t.Fatalf("%d stored rows for %d events", len(lines), len(want))
	}
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s := b.open(t)
		create(t, s, "old", nil)
		// The rows as the earlier Store wrote them: the session's update
		// time is its last append's.
		var last int64
		for _, line := range lines {
			var ev session.Event
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatal(err)
			}
			last = ev.Timestamp.UnixMicro()
			if _, err := s.db.ExecContext(ctx, insertEvent, testApp, testUser, "old", ev.ID, ev.InvocationID, ev.Author, last, line); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.db.ExecContext(ctx, touchSession, testApp, testUser, "old", last); err != nil {
			t.Fatal(err)
		}
		got := get(t, b.open(t), "old")
		if n := got.Events().Len(); n != len(want) {
			t.Fatalf("loaded %d events, want %d", n, len(want))
		}
		if !got.LastUpdateTime().Equal(time.UnixMicro(last)) {
			t.Errorf("updated %v, want %v", got.LastUpdateTime(), time.UnixMicro(last))
		}
		for i, ev := range want {
			loaded := got.Events().At(i)
			if d := cmp.Diff(ev, loaded); d != "" {
				t.Errorf("event %s as loaded (-want +got):\n%s", ev.ID, d)
			}
			if enc, err := appendEvent(nil, loaded); err != nil || string(enc) != lines[i] {
				t.Errorf("event %s: appendEvent gives\n%s (%v), stored\n%s", ev.ID, enc, err, lines[i])
			}
		}
	})
}
