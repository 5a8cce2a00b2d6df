package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestEventLogManyEvents checks ids, the log's order and Stream's replay
// and follow across the log's storage blocks, with two streams
// interleaved.
func TestEventLogManyEvents(t *testing.T) {
	l := newEventLog(func() time.Time { return time.Unix(0, 0) })
	l.open("a")
	l.open("b")
	const n = 3000 // past the doubling blocks into the fixed-size ones
	var seen []Event
	unsub := l.subscribe(func(ev Event) { seen = append(seen, ev) })
	for i := range n {
		stream := "a"
		if i%3 == 2 {
			stream = "b"
		}
		l.emit(stream, Event{Type: EventCustom, Custom: &Custom{Kind: fmt.Sprint(i)}})
	}
	unsub()
	all := l.all()
	if len(all) != n || len(seen) != n {
		t.Fatalf("log has %d events, subscriber saw %d, want %d", len(all), len(seen), n)
	}
	counts := map[string]int{}
	for i, ev := range all {
		want := fmt.Sprintf("%s-%d", ev.StreamID, counts[ev.StreamID])
		counts[ev.StreamID]++
		if ev.ID != want || ev.Custom.Kind != fmt.Sprint(i) || seen[i].ID != ev.ID {
			t.Fatalf("event %d = %s %q (subscriber saw %s), want %s %d", i, ev.ID, ev.Custom.Kind, seen[i].ID, want, i)
		}
	}

	// A Stream started mid-way replays the stream's events, then follows
	// it to its agent_end.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	got := make(chan []Event)
	go func() {
		var evs []Event
		for ev, err := range l.stream(ctx, "b") {
			if err != nil {
				t.Error(err)
				break
			}
			evs = append(evs, ev)
		}
		got <- evs
	}()
	for i := range 2000 {
		l.emit("b", Event{Type: EventCustom, Custom: &Custom{Kind: fmt.Sprint("more", i)}})
		if i%7 == 0 {
			time.Sleep(time.Microsecond) // let the consumer take a few at a time
		}
	}
	l.emit("b", Event{Type: EventAgentEnd, AgentEnd: &AgentEnd{Reason: EndCompleted}})
	evs := <-got
	if want := counts["b"] + 2001; len(evs) != want {
		t.Fatalf("stream b yielded %d events, want %d", len(evs), want)
	}
	for i, ev := range evs {
		if ev.ID != fmt.Sprintf("b-%d", i) {
			t.Fatalf("stream b event %d is %s", i, ev.ID)
		}
		if i >= counts["b"] && i < len(evs)-1 && ev.Custom.Kind != fmt.Sprint("more", i-counts["b"]) {
			t.Fatalf("stream b event %d is %q", i, ev.Custom.Kind)
		}
	}
}

func TestLocate(t *testing.T) {
	var b eventBlocks
	for i := range 5000 {
		b.append(Event{ID: fmt.Sprint(i)})
	}
	for i := range 5000 {
		if got := b.at(i).ID; got != fmt.Sprint(i) {
			t.Fatalf("at(%d) = %s", i, got)
		}
	}
	if sizes := []int{len(b.blocks[0]), len(b.blocks[1]), len(b.blocks[6]), len(b.blocks[7]), len(b.blocks[8])}; fmt.Sprint(sizes) != "[8 16 512 512 512]" {
		t.Errorf("block sizes %v", sizes)
	}
	if len(b.copyAll()) != 5000 || (&eventBlocks{}).copyAll() != nil {
		t.Error("copyAll")
	}
}

// TestEventLogMergesTextDeltas checks what the log keeps of a streamed
// answer: live delivery (subscribers, a Stream attached from the start)
// sees every delta; once the stream has ended, Events and a late Stream
// see each run of text deltas as one event with the run's first id and
// whole text, text and thoughts apart, and nothing else merged.
func TestEventLogMergesTextDeltas(t *testing.T) {
	tick := time.Unix(0, 0)
	l := newEventLog(func() time.Time { tick = tick.Add(time.Millisecond); return tick })
	l.open("s")
	l.open("o")
	var seen []Event
	unsub := l.subscribe(func(ev Event) { seen = append(seen, ev) })
	defer unsub()

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	attached := make(chan struct{})
	live := make(chan []Event)
	go func() {
		var evs []Event
		for ev, err := range l.stream(ctx, "s") {
			if err != nil {
				t.Error(err)
				break
			}
			if len(evs) == 0 {
				close(attached)
			}
			evs = append(evs, ev)
		}
		live <- evs
	}()

	type kept struct {
		id, kind, text string
		typ            EventType
	}
	describe := func(evs []Event) []kept {
		var out []kept
		for _, ev := range evs {
			k := kept{id: ev.ID, typ: ev.Type}
			if ev.Message != nil {
				for _, p := range ev.Message.Content {
					k.kind += p.Type + ","
					k.text += p.Text + p.Thought
				}
			}
			out = append(out, k)
		}
		return out
	}
	msg := func(role Role, parts ...ContentPart) Event {
		return Event{Type: EventMessage, Message: &Message{Role: role, Content: parts}}
	}
	thought := func(s string) Event {
		ev := msg(RoleAgent, ContentPart{Type: PartThought, Thought: s})
		ev.Meta = map[string]any{"source": "agent"}
		return ev
	}
	l.emit("s", msg(RoleUser, TextPart("question")))
	<-attached
	l.emit("s", Event{Type: EventAgentStart})
	for i := range 3 {
		l.emit("s", thought(fmt.Sprint("t", i, " ")))
	}
	const deltas = 200
	var want strings.Builder
	var mid []Event
	for i := range deltas {
		text := fmt.Sprintf("word%d ", i)
		want.WriteString(text)
		if i%2 == 0 {
			l.emit("s", msg(RoleAgent, TextPart(text)))
		} else { // a delta of two parts is text too
			l.emit("s", msg(RoleAgent, TextPart(text[:2]), TextPart(text[2:])))
		}
		switch i {
		case 100:
			mid = l.all()
		case 150:
			// Another stream's event in between moves when the deltas
			// before it are merged.
			l.emit("o", Event{Type: EventCustom, Custom: &Custom{Kind: "other"}})
		}
	}
	l.emit("s", Event{Type: EventToolRequest, ToolRequest: &ToolRequest{RequestID: "c1", Name: "ls"}})
	l.emit("s", msg(RoleAgent, TextPart("after ")))
	l.emit("s", msg(RoleAgent, TextPart("the call")))
	l.emit("s", thought("signed")) // a thought after text starts a run of its own
	signed := thought("")
	signed.Message.Content[0].ThoughtSignature = "c2ln"
	l.emit("s", signed) // a signature is never merged
	l.emit("s", msg(RoleAgent, TextPart("data"), ContentPart{Type: PartText, Text: "{}", MimeType: "application/json"}))
	l.emit("s", msg(RoleAgent, TextPart("lone")))
	l.emit("s", Event{Type: EventUsage, Usage: &Usage{Model: "m"}})
	midBefore := describe(mid)
	l.emit("s", Event{Type: EventAgentEnd, AgentEnd: &AgentEnd{Reason: EndCompleted}})

	emitted := 2 + 3 + deltas + 1 + 2 + 1 + 1 + 1 + 1 + 1 + 1 // s's events
	if len(seen) != emitted+1 {
		t.Fatalf("the subscriber saw %d events, want %d", len(seen), emitted+1)
	}
	liveEvs := <-live
	if len(liveEvs) != emitted {
		t.Fatalf("the live Stream yielded %d events, want %d", len(liveEvs), emitted)
	}
	for i, ev := range liveEvs {
		if ev.ID != fmt.Sprint("s-", i) {
			t.Fatalf("live event %d has id %s", i, ev.ID)
		}
	}
	if got := describe(mid); !slices.Equal(got, midBefore) || len(mid) != 2+3+101 {
		t.Errorf("an Events copy taken mid-answer changed, or had merged deltas: %d events", len(mid))
	}

	// What is kept: one event per run.
	wantKept := []kept{
		{"s-0", "text,", "question", EventMessage},
		{"s-1", "", "", EventAgentStart},
		{"s-2", "thought,", "t0 t1 t2 ", EventMessage},
		{"s-5", "text,", want.String(), EventMessage},
		{"o-0", "", "", EventCustom},
		{"s-205", "", "", EventToolRequest},
		{"s-206", "text,", "after the call", EventMessage},
		{"s-208", "thought,", "signed", EventMessage},
		{"s-209", "thought,", "", EventMessage},
		{"s-210", "text,text,", "data{}", EventMessage},
		{"s-211", "text,", "lone", EventMessage},
		{"s-212", "", "", EventUsage},
		{"s-213", "", "", EventAgentEnd},
	}
	all := l.all()
	if got := describe(all); !slices.Equal(got, wantKept) {
		t.Errorf("the log keeps\n%v\nwant\n%v", got, wantKept)
	}
	if merged := all[3]; !merged.Timestamp.Equal(seen[5].Timestamp) || merged.Meta != nil {
		t.Errorf("the merged text event %+v, want the first delta's timestamp %v and no _meta", merged, seen[5].Timestamp)
	}
	if merged := all[2]; merged.Meta["source"] != "agent" {
		t.Errorf("the merged thought lost its _meta: %+v", merged.Meta)
	}

	// A late Stream replays what the log keeps, the other stream's too.
	var late []Event
	for ev, err := range l.stream(ctx, "s") {
		if err != nil {
			t.Fatal(err)
		}
		late = append(late, ev)
	}
	wantS := slices.DeleteFunc(slices.Clone(wantKept), func(k kept) bool { return k.id == "o-0" })
	if got := describe(late); !slices.Equal(got, wantS) {
		t.Errorf("a late Stream yields\n%v\nwant\n%v", got, wantS)
	}
	l.emit("o", Event{Type: EventAgentEnd, AgentEnd: &AgentEnd{Reason: EndCompleted}})
	var other []Event
	for ev, err := range l.stream(ctx, "o") {
		if err != nil {
			t.Fatal(err)
		}
		other = append(other, ev)
	}
	if got := types(other); !slices.Equal(got, []EventType{EventCustom, EventAgentEnd}) || other[0].ID != "o-0" {
		t.Errorf("stream o replays %v", describe(other))
	}
}

// TestEventLogMergeFreesBlocks checks that merging a long answer's deltas
// gives back the storage blocks they took.
func TestEventLogMergeFreesBlocks(t *testing.T) {
	l := newEventLog(time.Now)
	defer l.subscribe(func(Event) {})() // followed live: merged at the end
	l.open("s")
	l.emit("s", Event{Type: EventAgentStart})
	for range 3000 {
		l.emit("s", Event{Type: EventMessage, Message: &Message{Role: RoleAgent, Content: []ContentPart{TextPart("ab")}}})
	}
	if len(l.events.blocks) < 8 {
		t.Fatalf("%d blocks for %d events", len(l.events.blocks), l.events.len())
	}
	l.emit("s", Event{Type: EventAgentEnd, AgentEnd: &AgentEnd{Reason: EndCompleted}})
	all := l.all()
	if len(all) != 3 || len(all[1].Message.Content[0].Text) != 6000 || l.events.len() != 3 {
		t.Fatalf("the log keeps %d events", len(all))
	}
	if len(l.events.blocks) != 1 || cap(l.streams["s"].at) != 3 {
		t.Errorf("the log keeps %d blocks and %d positions for 3 events", len(l.events.blocks), cap(l.streams["s"].at))
	}
	// The log goes on from there.
	l.open("t")
	for i := range 20 {
		l.emit("t", Event{Type: EventCustom, Custom: &Custom{Kind: fmt.Sprint(i)}})
	}
	if all := l.all(); len(all) != 23 || all[22].Custom.Kind != "19" || all[2].Type != EventAgentEnd {
		t.Errorf("after the merge the log holds %d events", len(all))
	}
}

// TestSessionKeepsStreamedAnswerMerged runs a 200-delta answer through a
// session: a subscriber sees every delta, while the session's log keeps
// the answer as one message event with the whole text, and a Stream that
// attaches after the answer replays that text.
func TestSessionKeepsStreamedAnswerMerged(t *testing.T) {
	const deltas = 200
	s := newTestSession(t, newWordStream(deltas), Config{})
	var mu sync.Mutex
	var seen []Event
	unsub := s.Subscribe(func(ev Event) {
		mu.Lock()
		seen = append(seen, ev)
		mu.Unlock()
	})
	defer unsub()
	live := run(t, s, "tell me")
	var want strings.Builder
	for i := range deltas {
		fmt.Fprintf(&want, "word%d ", i)
	}
	answer := func(evs []Event) (n int, text, firstID string) {
		for _, ev := range evs {
			if ev.Type == EventMessage && ev.Message.Role == RoleAgent {
				if n == 0 {
					firstID = ev.ID
				}
				n++
				for _, p := range ev.Message.Content {
					text += p.Text
				}
			}
		}
		return n, text, firstID
	}

	mu.Lock()
	n, text, firstID := answer(seen)
	seenTypes := types(seen)
	firstDelta := slices.IndexFunc(seen, func(ev Event) bool { return ev.ID == firstID })
	mu.Unlock()
	if n != deltas || text != want.String() {
		t.Fatalf("the subscriber saw %d deltas, want %d (text %q)", n, deltas, text)
	}
	if _, text, _ := answer(live); text != want.String() {
		t.Errorf("the Stream consumer got %q", text)
	}

	all := s.Events()
	if n, text, id := answer(all); n != 1 || text != want.String() || id != firstID {
		t.Errorf("the log keeps %d agent messages, the first %s, want 1, %s, with the whole text (got %q)", n, id, firstID, text)
	}
	// The other events are all there: the subscriber's with the deltas
	// but the first left out.
	wantTypes := slices.Delete(seenTypes, firstDelta+1, firstDelta+deltas)
	if got := types(all); !slices.Equal(got, wantTypes) {
		t.Errorf("the log keeps %v, want %v", got, wantTypes)
	}

	var late []Event
	for ev, err := range s.Stream(t.Context(), all[len(all)-1].StreamID) {
		if err != nil {
			t.Fatal(err)
		}
		late = append(late, ev)
	}
	if n, text, _ := answer(late); n != 1 || text != want.String() || last(late).Type != EventAgentEnd {
		t.Errorf("a late Stream replays %d agent messages, text %q", n, text)
	}
}

// TestEventLogMergeWaitsForReplay: a stream nobody followed live (its
// caller has yet to call Stream: the model answered first) keeps every
// delta until a Stream consumer has replayed it, or until the next stream
// starts; then its deltas are merged.
func TestEventLogMergeWaitsForReplay(t *testing.T) {
	answer := func(l *eventLog, id string) {
		l.open(id)
		l.emit(id, Event{Type: EventAgentStart})
		for _, w := range []string{"one ", "two ", "three"} {
			l.emit(id, Event{Type: EventMessage, Message: &Message{Role: RoleAgent, Content: []ContentPart{TextPart(w)}}})
		}
		l.emit(id, Event{Type: EventAgentEnd, AgentEnd: &AgentEnd{Reason: EndCompleted}})
	}
	texts := func(evs []Event) (out []string) {
		for _, ev := range evs {
			if ev.Type == EventMessage {
				out = append(out, ev.Message.Content[0].Text)
			}
		}
		return out
	}

	l := newEventLog(time.Now)
	answer(l, "s")
	if got := texts(l.all()); len(got) != 3 {
		t.Fatalf("before its replay the log holds %q, want every delta", got)
	}
	var replayed []Event
	for ev, err := range l.stream(t.Context(), "s") {
		if err != nil {
			t.Fatal(err)
		}
		replayed = append(replayed, ev)
	}
	if got := texts(replayed); strings.Join(got, "|") != "one |two |three" {
		t.Errorf("the late Stream replayed %q, want every delta", got)
	}
	if got := texts(l.all()); len(got) != 1 || got[0] != "one two three" {
		t.Errorf("after the replay the log holds %q, want one merged event", got)
	}
	if len(l.deferred) != 0 {
		t.Errorf("%d streams still wait for a merge", len(l.deferred))
	}

	// Never replayed: the next stream settles it.
	l = newEventLog(time.Now)
	answer(l, "a")
	answer(l, "b")
	if got := texts(l.all()); strings.Join(got, "|") != "one two three|one |two |three" {
		t.Errorf("with b started and ended unfollowed, the log holds %q", got)
	}
	if all := l.all(); all[len(all)-1].Type != EventAgentEnd || all[len(all)-1].StreamID != "b" {
		t.Errorf("the log's last event is %+v", all[len(all)-1])
	}
}
