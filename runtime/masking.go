package runtime

import (
	"context"
	"fmt"
	"slices"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/masking"
	"github.com/agentry-dev/agentry/sessions"
)

// persistMasked writes masked function responses back into the stored
// session: every event holding a masked call's response gets a new content
// with that response replaced, written through the store in one
// transaction. The request the
// masking processor rewrote is a copy, so without this the next turn, a
// resumed session and the store would all see the full output again.
func persistMasked(store *sessions.Store, app, user string) masking.Persist {
	return func(ctx context.Context, sessionID string, masked []masking.Masked) error {
		sess, err := store.Live(ctx, app, user, sessionID)
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
		if err := store.ReplaceEventContents(ctx, app, user, sessionID, contents); err != nil {
			return fmt.Errorf("persist masked outputs: %w", err)
		}
		return nil
	}
}
