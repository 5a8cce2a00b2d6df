package runtime

import (
	"context"
	"fmt"
	"iter"
	"slices"

	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/masking"
)

// MaskingProcessor returns the masking processor of a session built from
// settings: it reads call ids from svc and, when svc is a rewritable
// store, persists what it masks there and in the transcript rec (nil for
// none).
func MaskingProcessor(m *masking.Masker, svc session.Service, rec *Recorder) *masking.Processor {
	store, ok := svc.(RewritableStore)
	if !ok {
		return masking.NewProcessor(m, SessionHistory(svc), nil)
	}
	stored := persistMasked(store)
	return masking.NewProcessor(m, SessionHistory(svc), func(ctx context.Context, sessionID string, masked []masking.Masked) error {
		if err := stored(ctx, sessionID, masked); err != nil {
			return err
		}
		if rec != nil {
			rec.Masked(masked)
		}
		return nil
	})
}

// SessionHistory is the masking processor's view of the sessions svc
// stores: the contents of a session's events, in order, call ids intact.
func SessionHistory(svc session.Service) masking.History {
	return func(ctx context.Context, app, user, sessionID string) (iter.Seq[*genai.Content], error) {
		resp, err := svc.Get(ctx, &session.GetRequest{AppName: app, UserID: user, SessionID: sessionID})
		if err != nil {
			return nil, err
		}
		return func(yield func(*genai.Content) bool) {
			for ev := range resp.Session.Events().All() {
				if ev != nil && ev.Content != nil && !yield(ev.Content) {
					return
				}
			}
		}, nil
	}
}

// persistMasked writes masked function responses back into the stored
// session: every event holding a masked call's response gets a new content
// with that response replaced, written through the store in one
// transaction. The request the masking processor rewrote is a copy, so
// without this the next turn, a resumed session and the store would all
// see the full output again.
func persistMasked(store RewritableStore) masking.Persist {
	return func(ctx context.Context, sessionID string, masked []masking.Masked) error {
		sess, err := store.Live(ctx, appName, userID, sessionID)
		if err != nil {
			return fmt.Errorf("persist masked outputs: %w", err)
		}
		byID := make(map[string]masking.Masked, len(masked))
		for _, m := range masked {
			byID[m.CallID] = m
		}
		evs := sess.Events()
		contents := map[string]*genai.Content{}
		// Newest first: masked responses are old, but the scan stops as
		// soon as every one is found.
		for i := evs.Len() - 1; i >= 0 && len(byID) > 0; i-- {
			ev := evs.At(i)
			if ev.Content == nil {
				continue
			}
			var content *genai.Content
			for j, p := range ev.Content.Parts {
				if p == nil || p.FunctionResponse == nil {
					continue
				}
				m, ok := byID[p.FunctionResponse.ID]
				if !ok {
					continue
				}
				if content == nil {
					c := *ev.Content
					c.Parts = slices.Clone(ev.Content.Parts)
					content = &c
				}
				fr := *p.FunctionResponse
				fr.Response = m.Response
				np := *p
				np.FunctionResponse = &fr
				content.Parts[j] = &np
				delete(byID, m.CallID)
			}
			if content != nil {
				contents[ev.ID] = content
			}
		}
		if err := store.ReplaceEventContents(ctx, appName, userID, sessionID, contents); err != nil {
			return fmt.Errorf("persist masked outputs: %w", err)
		}
		return nil
	}
}
