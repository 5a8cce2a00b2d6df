// Package conversation holds the request processor that gives a model
// call its conversation: the session's history, built as ADK's default
// contents building builds it, incrementally.
package conversation

import (
	"context"
	"fmt"
	"iter"
	"sync"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"
)

// Name is the processor's name.
const Name = "conversation"

// Events reads a stored session's events as the session holds them now:
// the events of the running invocation included, and the same event and
// content objects from one read to the next while the history is not
// rewritten (a session service's live object, or ADK's in-memory copy).
type Events func(ctx context.Context, appName, userID, sessionID string) (session.Events, error)

// Processor is the request processor that gives a model call its
// conversation. The session's agent runs with ADK's
// llmagent.IncludeContentsNone, so ADK builds only the current turn, and
// the processor replaces the request's contents with the whole history, as
// ADK's default building makes it (the same filtering, foreign-agent
// turns, rearranged and merged function responses, stripped client ids and
// continuation turn) — without ADK's deep copy of every content on every
// call.
//
// It keeps, per session, the request contents of the part of the history
// it has already built, and on each call builds only the events that came
// after it. The cached part is checked against the session's events on
// every call (the same event object with the same content, else the same
// event id, author, branch and content pointer: a comparison per event):
// where a rewritten history — masked tool outputs written back, a
// compression, a rewind, a resumed session — first differs, the cache is
// cut back to the user's prompt before that point and built on from
// there. A tail whose call ids reach into the cached part (a response to
// an old call, a reused id) rebuilds it whole,
// because ADK would move that response next to its call.
//
// The cached contents are shared by the requests of a session: processors
// after this one replace a content they change and never write one, as
// masking and the content processor do.
//
// The agent is one that runs outside ADK's isolation scopes (ADK callbacks
// do not expose the scope; agentry's agents have none): events of a scope
// are left out, as ADK leaves them out for an unscoped agent.
type Processor struct {
	events   Events
	mu       sync.Mutex
	sessions map[string]*conversationCache
}

// New returns a conversation processor reading sessions through events,
// with an empty cache.
func New(events Events) *Processor {
	return &Processor{events: events, sessions: map[string]*conversationCache{}}
}

// Name implements processors.RequestProcessor.
func (c *Processor) Name() string { return Name }

// Forget drops the cache of session sessionID (a closed session).
func (c *Processor) Forget(sessionID string) {
	c.mu.Lock()
	delete(c.sessions, sessionID)
	c.mu.Unlock()
}

// ProcessRequest implements processors.RequestProcessor: req.Contents becomes the
// session's conversation.
func (c *Processor) ProcessRequest(ctx agent.Context, req *model.LLMRequest) error {
	sc := scope{agent: ctx.AgentName(), branch: ctx.Branch()}
	evs, err := c.events(ctx, ctx.AppName(), ctx.UserID(), ctx.SessionID())
	if err != nil {
		return fmt.Errorf("load session %s: %w", ctx.SessionID(), err)
	}
	c.mu.Lock()
	cache := c.sessions[ctx.SessionID()]
	if cache == nil {
		cache = &conversationCache{}
		c.sessions[ctx.SessionID()] = cache
	}
	c.mu.Unlock()
	contents, err := cache.buildEvents(sc, evs)
	if err != nil {
		return err
	}
	req.Contents = contents
	return nil
}

// eventKey is what the cache remembers of an event it has built, to
// recognise it unchanged: the same object with the same content, or an
// event with the same id, author, branch, scope and content.
type eventKey struct {
	ev                        *session.Event
	id, author, branch, scope string
	content                   *genai.Content
}

// same reports whether ev is the event k was made of, unchanged.
func (k *eventKey) same(ev *session.Event) bool {
	if ev == k.ev {
		// The fast path, a session's own event objects: only a content
		// replaced in place (masking's write-back) changes them.
		return ev != nil && ev.LLMResponse.Content == k.content
	}
	return ev != nil && ev.ID == k.id && ev.Author == k.author && ev.Branch == k.branch &&
		ev.IsolationScope == k.scope && ev.LLMResponse.Content == k.content
}

func keyOf(ev *session.Event) eventKey {
	return eventKey{ev: ev, id: ev.ID, author: ev.Author, branch: ev.Branch, scope: ev.IsolationScope, content: ev.LLMResponse.Content}
}

// conversationCache is one session's built part of the conversation, in
// segments that each start at a prompt, with what the cache was after
// them, so that a history cut or rewritten after a segment (a rewind, a
// masked response) keeps the segments before.
type conversationCache struct {
	mu    sync.Mutex
	scope scope
	// keys are the session's events the cache covers, filtered out or
	// not, in order.
	keys []eventKey
	// filtered is the number of those events the agent sees; last is the
	// last of them as it sees it.
	filtered int
	last     *session.Event
	// ids count the function call and response ids of the covered events.
	ids map[string]int
	// contents are the request contents of the covered events.
	contents []*genai.Content
	segments []segment
	// built counts the events filtered and built, for tests.
	built int
}

// segment is the part of the cache one call added: the cache's sizes and
// last event after it, and the ids it holds.
type segment struct {
	keys, contents, filtered int
	last                     *session.Event
	ids                      []string
	// stable is whether the cache may end here: ADK would leave the
	// segment's last event in place were it the history's last.
	stable bool
}

func (k *conversationCache) reset(sc scope) {
	k.scope = sc
	k.ids = map[string]int{}
	k.truncate(0)
}

// matched is the number of the session's first events the cache still
// covers unchanged.
func (k *conversationCache) matched(events session.Events) int {
	n := min(events.Len(), len(k.keys))
	for i := range n {
		if !k.keys[i].same(events.At(i)) {
			return i
		}
	}
	return n
}

// truncate drops the segments that cover more than the first n events.
func (k *conversationCache) truncate(n int) {
	for len(k.segments) > 0 && (k.segments[len(k.segments)-1].keys > n || !k.segments[len(k.segments)-1].stable) {
		for _, id := range k.segments[len(k.segments)-1].ids {
			if k.ids[id]--; k.ids[id] <= 0 {
				delete(k.ids, id)
			}
		}
		k.segments = k.segments[:len(k.segments)-1]
	}
	var at segment
	if len(k.segments) > 0 {
		at = k.segments[len(k.segments)-1]
	}
	k.keys, k.contents = k.keys[:at.keys], k.contents[:at.contents]
	k.filtered, k.last = at.filtered, at.last
}

// build is buildEvents over a slice of events.
func (k *conversationCache) build(sc scope, events []*session.Event) ([]*genai.Content, error) {
	return k.buildEvents(sc, eventSlice(events))
}

// buildEvents returns the request contents of events, building the events
// after the cached part and extending the cache when that part can grow.
// Only the events after the cached part are read more than once.
func (k *conversationCache) buildEvents(sc scope, events session.Events) ([]*genai.Content, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ids == nil || sc != k.scope {
		k.reset(sc)
	} else if n := k.matched(events); n < len(k.keys) {
		k.truncate(n)
	}
	// The cached events hold no transcription: a build that met one
	// cached nothing.
	tail := eventsFrom(events, len(k.keys))
	for _, ev := range tail {
		if hasTranscription(ev) {
			// Live transcriptions fold across events; build them whole.
			k.ids = nil
			return buildAll(sc, eventsFrom(events, 0))
		}
	}
	ps := split(sc, tail)
	k.built += len(tail)
	if k.touches(ps) {
		all := eventsFrom(events, 0)
		k.reset(sc)
		ps = split(sc, all)
		k.built += len(all)
	}
	whole := k.filtered
	for _, p := range ps {
		whole += len(p.filtered)
	}
	// ADK rearranges the latest response within the last piece: the
	// call it answers has an id of that piece only.
	var moved bool
	if n := len(ps); n > 0 {
		prev := k.last
		for _, p := range ps[:n-1] {
			if len(p.filtered) > 0 {
				prev = p.filtered[len(p.filtered)-1]
			}
		}
		before := len(ps[n-1].filtered)
		arranged, m, err := rearrangeLatest(ps[n-1].filtered, prev, whole)
		if err != nil {
			return nil, err
		}
		ps[n-1].filtered, moved = arranged, m
		whole += len(arranged) - before
	}
	built := make([][]*genai.Content, len(ps))
	size := len(k.contents) + 1
	for i, p := range ps {
		arranged, err := rearrangeHistory(p.filtered, whole)
		if err != nil {
			return nil, err
		}
		for _, ev := range arranged {
			if c := requestContent(ev); c != nil {
				built[i] = append(built[i], c)
			}
		}
		size += len(built[i])
	}
	// Room for the few contents the content processor puts in front (the
	// session context and context sources), so that it need not copy.
	out := make([]*genai.Content, 0, size+prefixRoom)
	out = append(out, k.contents...)
	for _, b := range built {
		out = append(out, b...)
	}
	if n := len(out); n > 0 && out[n-1].Role != genai.RoleUser {
		out = append(out, genai.NewContentFromText(adkContinueText, genai.RoleUser))
	}
	if whole < 2 {
		return out, nil
	}
	// The pieces join the cache, each a segment, except a last one whose
	// latest response was rearranged: ADK rearranges only the very last
	// event, so once more events follow it, it would be built differently.
	for i, p := range ps {
		stable := !moved
		if i < len(ps)-1 {
			_, m, err := rearrangeLatest(p.filtered, k.last, k.filtered+len(p.filtered))
			stable = err == nil && !m
		} else if moved {
			break
		}
		for _, id := range p.ids {
			k.ids[id]++
		}
		for _, ev := range p.raw {
			k.keys = append(k.keys, keyOf(ev))
		}
		if len(p.filtered) > 0 {
			k.last = p.filtered[len(p.filtered)-1]
		}
		k.filtered += len(p.filtered)
		k.contents = append(k.contents, built[i]...)
		k.segments = append(k.segments, segment{keys: len(k.keys), contents: len(k.contents), filtered: k.filtered, last: k.last, ids: p.ids, stable: stable && k.filtered >= 2})
	}
	return out, nil
}

// prefixRoom is the spare capacity of a request's contents list.
const prefixRoom = 4

// eventsFrom returns events from index i on.
func eventsFrom(events session.Events, i int) []*session.Event {
	n := events.Len()
	if i >= n {
		return nil
	}
	out := make([]*session.Event, 0, n-i)
	for ; i < n; i++ {
		out = append(out, events.At(i))
	}
	return out
}

// eventSlice is a slice of events as session.Events.
type eventSlice []*session.Event

func (e eventSlice) Len() int                { return len(e) }
func (e eventSlice) At(i int) *session.Event { return e[i] }
func (e eventSlice) All() iter.Seq[*session.Event] {
	return func(yield func(*session.Event) bool) {
		for _, ev := range e {
			if !yield(ev) {
				return
			}
		}
	}
}

// piece is a run of new events that builds on its own: it starts at a
// prompt, and no other piece holds one of its call or response ids.
type piece struct {
	raw, filtered []*session.Event
	ids           []string
}

// split cuts events into pieces at the user's prompts, filtering them.
// Pieces that share an id are one piece (ADK would move a response next
// to its call across them), and so is a piece the agent sees nothing of
// with the one before it.
func split(sc scope, events []*session.Event) []piece {
	var ps []piece
	for _, ev := range events {
		if len(ps) == 0 || (ev.Author == "user" && !hasFunctionResponse(ev.LLMResponse.Content) && len(ps[len(ps)-1].filtered) > 0) {
			ps = append(ps, piece{})
		}
		p := &ps[len(ps)-1]
		p.raw = append(p.raw, ev)
		fe, ok := sc.filterEvent(ev)
		if !ok {
			continue
		}
		p.filtered = append(p.filtered, fe)
		for _, fc := range functionCalls(fe.LLMResponse.Content) {
			p.ids = append(p.ids, fc.ID)
		}
		for _, fr := range functionResponses(fe.LLMResponse.Content) {
			p.ids = append(p.ids, fr.ID)
		}
	}
	if n := len(ps); n > 1 && len(ps[n-1].filtered) == 0 {
		ps[n-2].raw = append(ps[n-2].raw, ps[n-1].raw...)
		ps = ps[:n-1]
	}
	if len(ps) > 1 && sharedIDs(ps) {
		one := piece{}
		for _, p := range ps {
			one.raw = append(one.raw, p.raw...)
			one.filtered = append(one.filtered, p.filtered...)
			one.ids = append(one.ids, p.ids...)
		}
		ps = []piece{one}
	}
	return ps
}

// sharedIDs reports whether two pieces hold the same id.
func sharedIDs(ps []piece) bool {
	owner := map[string]int{}
	for i, p := range ps {
		for _, id := range p.ids {
			if o, ok := owner[id]; ok && o != i {
				return true
			}
			owner[id] = i
		}
	}
	return false
}

// touches reports whether a piece has an id of the cached events.
func (k *conversationCache) touches(ps []piece) bool {
	if len(k.ids) == 0 {
		return false
	}
	for _, p := range ps {
		for _, id := range p.ids {
			if k.ids[id] > 0 {
				return true
			}
		}
	}
	return false
}

// buildAll builds the contents of events in one pass, without the cache.
func buildAll(sc scope, events []*session.Event) ([]*genai.Content, error) {
	var filtered []*session.Event
	for _, ev := range events {
		if fe, ok := sc.filterEvent(ev); ok {
			filtered = append(filtered, fe)
		}
	}
	filtered = aggregateTranscriptions(filtered)
	arranged, _, err := rearrangeLatest(filtered, nil, len(filtered))
	if err != nil {
		return nil, err
	}
	if arranged, err = rearrangeHistory(arranged, len(arranged)); err != nil {
		return nil, err
	}
	out := make([]*genai.Content, 0, len(arranged)+1)
	for _, ev := range arranged {
		if c := requestContent(ev); c != nil {
			out = append(out, c)
		}
	}
	if n := len(out); n > 0 && out[n-1].Role != genai.RoleUser {
		out = append(out, genai.NewContentFromText(adkContinueText, genai.RoleUser))
	}
	return out, nil
}

// Build returns the request contents ADK's default building makes of
// events for an unscoped agent named agent on the root branch, in one
// pass without a cache.
func Build(agent string, events []*session.Event) ([]*genai.Content, error) {
	return buildAll(scope{agent: agent}, events)
}
