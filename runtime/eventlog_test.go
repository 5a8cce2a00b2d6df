package runtime

import (
	"context"
	"fmt"
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
