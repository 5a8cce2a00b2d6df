// Package conversation holds the request processor that gives a model
// call its conversation: the session's history, built as ADK's default
// contents building builds it, incrementally.
package conversation

import (
	"context"
	"fmt"
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
// every call (event id, author, branch and content pointer, a comparison
// per event): a rewritten history — masked tool outputs written back, a
// compression, a rewind, a resumed session — changes them, and the cache
// is rebuilt. A tail whose call ids reach into the cached part (a response
// to an old call, a reused id) also rebuilds it, because ADK would move
// that response next to its call.
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
	events := make([]*session.Event, 0, evs.Len())
	for ev := range evs.All() {
		events = append(events, ev)
	}
	c.mu.Lock()
	cache := c.sessions[ctx.SessionID()]
	if cache == nil {
		cache = &conversationCache{}
		c.sessions[ctx.SessionID()] = cache
	}
	c.mu.Unlock()
	contents, err := cache.build(sc, events)
	if err != nil {
		return err
	}
	req.Contents = contents
	return nil
}

// eventKey is what the cache remembers of an event it has built, to
// recognise it unchanged.
type eventKey struct {
	id, author, branch, scope string
	content                   *genai.Content
}

func keyOf(ev *session.Event) eventKey {
	return eventKey{id: ev.ID, author: ev.Author, branch: ev.Branch, scope: ev.IsolationScope, content: ev.LLMResponse.Content}
}

// conversationCache is one session's built part of the conversation.
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
	// ids are the function call and response ids of the covered events.
	ids map[string]struct{}
	// contents are the request contents of the covered events.
	contents []*genai.Content
	// built counts the events filtered and built, for tests.
	built int
}

func (k *conversationCache) reset(sc scope) {
	k.scope = sc
	k.keys = k.keys[:0]
	k.filtered = 0
	k.last = nil
	k.ids = map[string]struct{}{}
	k.contents = nil
}

// covers reports whether the cache's events are still the first events of
// the session.
func (k *conversationCache) covers(sc scope, events []*session.Event) bool {
	if k.ids == nil || sc != k.scope || len(events) < len(k.keys) {
		return false
	}
	for i, key := range k.keys {
		if keyOf(events[i]) != key {
			return false
		}
	}
	return true
}

// build returns the request contents of events, building the events after
// the cached part and extending the cache when that part can grow.
func (k *conversationCache) build(sc scope, events []*session.Event) ([]*genai.Content, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, ev := range events {
		if hasTranscription(ev) {
			// Live transcriptions fold across events; build them whole.
			k.ids = nil
			return buildAll(sc, events)
		}
	}
	if !k.covers(sc, events) {
		k.reset(sc)
	}
	tail := make([]*session.Event, 0, len(events)-len(k.keys))
	for _, ev := range events[len(k.keys):] {
		if fe, ok := sc.filterEvent(ev); ok {
			tail = append(tail, fe)
		}
	}
	k.built += len(events) - len(k.keys)
	if k.touches(tail) {
		k.reset(sc)
		tail = tail[:0]
		for _, ev := range events {
			if fe, ok := sc.filterEvent(ev); ok {
				tail = append(tail, fe)
			}
		}
		k.built += len(events)
	}
	whole := k.filtered + len(tail)
	arranged, latestMoved, err := rearrangeLatest(tail, k.last, whole)
	if err != nil {
		return nil, err
	}
	if arranged, err = rearrangeHistory(arranged, k.filtered+len(arranged)); err != nil {
		return nil, err
	}
	built := make([]*genai.Content, 0, len(arranged))
	for _, ev := range arranged {
		if c := requestContent(ev); c != nil {
			built = append(built, c)
		}
	}
	out := make([]*genai.Content, 0, len(k.contents)+len(built)+1)
	out = append(append(out, k.contents...), built...)
	if n := len(out); n > 0 && out[n-1].Role != genai.RoleUser {
		out = append(out, genai.NewContentFromText(adkContinueText, genai.RoleUser))
	}
	// The built events join the cache unless the latest response was
	// rearranged: ADK rearranges only the very last event, so once more
	// events follow it, it would be built differently.
	if whole >= 2 && !latestMoved {
		for _, ev := range events[len(k.keys):] {
			k.keys = append(k.keys, keyOf(ev))
		}
		for _, ev := range tail {
			for _, fc := range functionCalls(ev.LLMResponse.Content) {
				k.ids[fc.ID] = struct{}{}
			}
			for _, fr := range functionResponses(ev.LLMResponse.Content) {
				k.ids[fr.ID] = struct{}{}
			}
		}
		if len(tail) > 0 {
			k.last = tail[len(tail)-1]
		}
		k.filtered = whole
		k.contents = append(k.contents, built...)
	}
	return out, nil
}

// touches reports whether a call or response of tail has an id of the
// cached events.
func (k *conversationCache) touches(tail []*session.Event) bool {
	if len(k.ids) == 0 {
		return false
	}
	for _, ev := range tail {
		for _, fc := range functionCalls(ev.LLMResponse.Content) {
			if _, ok := k.ids[fc.ID]; ok {
				return true
			}
		}
		for _, fr := range functionResponses(ev.LLMResponse.Content) {
			if _, ok := k.ids[fr.ID]; ok {
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
