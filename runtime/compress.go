package runtime

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/adk/v2/session"

	"github.com/agentry-dev/agentry/compression"
	"github.com/agentry-dev/agentry/plugins/compress"
)

// CustomChatCompressed is the custom event kind emitted when the history
// was summarised (see compress.CustomChatCompressed).
const CustomChatCompressed = compress.CustomChatCompressed

// PreCompressTrigger says why a compression was attempted: gemini-cli's
// PreCompressTrigger values.
const (
	PreCompressAuto   = compress.PreCompressAuto
	PreCompressManual = compress.PreCompressManual
)

// CompressionConfig turns on chat compression for a session built by New.
type CompressionConfig = compress.Config

// CompressionInfo is what a compression did: the prompt's tokens before
// and after, and gemini-cli's status (compression.StatusCompressed,
// StatusNoop …).
type CompressionInfo = compression.Info

// ErrNoCompression reports a session without chat compression, which
// needs a session store it can rewrite (settings session.store sqlite or
// postgres; the memory store has none).
var ErrNoCompression = errors.New("this session has no chat compression: it needs the sqlite or postgres session store")

// Compress is gemini-cli's /compress: the session's history is compressed
// now, whatever its size, through the compression plugin's path (the
// PreCompress hook with trigger manual, the summary and its verification,
// the stored session rewritten in one transaction). The session must be
// idle — ErrBusy otherwise — and a Send meanwhile waits for it. A
// compression that summarised emits chat_compressed, on a stream of its
// own, for drivers to show. A session without compression fails with
// ErrNoCompression; a failed attempt returns its error and leaves the
// history unchanged.
func (s *Session) Compress(ctx context.Context) (CompressionInfo, error) {
	if s.compressor == nil {
		return CompressionInfo{}, ErrNoCompression
	}
	release, err := s.streams.Hold(ctx)
	if errors.Is(err, ErrBusy) {
		return CompressionInfo{}, fmt.Errorf("%w: wait for the running prompt to end, or abort it, before compressing", ErrBusy)
	}
	if err != nil {
		return CompressionInfo{}, err
	}
	defer release()
	s.mu.Lock()
	ran := s.initialized
	s.mu.Unlock()
	if !ran {
		// A session not built over a stored one (EnsureSession) is
		// stored by its first prompt: before it there is no history.
		if _, err := s.svc.Get(ctx, &session.GetRequest{AppName: s.cfg.appName, UserID: s.cfg.userID, SessionID: s.cfg.sessionID}); err != nil {
			return CompressionInfo{Status: compression.StatusNoop}, nil
		}
	}
	info, err := s.compressor.Compress(ctx, s.cfg.sessionID)
	if err != nil {
		return info, fmt.Errorf("compress session %s: %w", s.cfg.sessionID, err)
	}
	if info.Status == compression.StatusCompressed {
		s.historyRewritten()
		st := &stream{id: s.cfg.newID()}
		s.emit(st, Event{Type: EventCustom, Custom: &Custom{Kind: CustomChatCompressed, Data: map[string]any{
			"originalTokenCount": info.OriginalTokens,
			"newTokenCount":      info.NewTokens,
			"compressionStatus":  info.Status.Code(),
			"status":             string(info.Status),
		}}})
	}
	return info, nil
}
