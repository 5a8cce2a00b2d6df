package llm

import (
	"errors"
	"path/filepath"
	"testing"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/internal/fakegemini"
)

// TestGeminiVertexExpressMode checks Vertex AI with an API key and no
// project: the key goes to Vertex AI's publisher model path, as
// gemini-cli's GOOGLE_API_KEY express mode sends it.
func TestGeminiVertexExpressMode(t *testing.T) {
	t.Parallel()
	srv := fakegemini.New(t, fakegemini.WithAPIKey("vertex-key"))
	srv.Enqueue(fakegemini.Text("hello"))
	g, err := NewGemini(t.Context(), GeminiConfig{APIKey: "vertex-key", VertexAI: true, BaseURL: srv.URL})
	if err != nil {
		t.Fatalf("NewGemini: %v", err)
	}
	var text string
	for resp, err := range g.GenerateContentStream(t.Context(), "gemini-2.5-flash", genai.Text("hi"), nil) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		text += resp.Text()
	}
	reqs := srv.Requests()
	if text != "hello" || len(reqs) != 1 {
		t.Fatalf("text %q after %d requests", text, len(reqs))
	}
	if want := "/v1beta1/publishers/google/models/gemini-2.5-flash:streamGenerateContent"; reqs[0].Path != want {
		t.Errorf("path = %s, want %s", reqs[0].Path, want)
	}
}

// TestGeminiVertexWithoutCredentials checks that Vertex AI without a key
// and without a usable project fails with ErrNoCredentials (exit 41).
func TestGeminiVertexWithoutCredentials(t *testing.T) {
	// No key, no project: refused before any client is made.
	_, err := NewGemini(t.Context(), GeminiConfig{VertexAI: true, Location: "us-central1"})
	if !errors.Is(err, ErrNoCredentials) {
		t.Errorf("without project: err = %v, want ErrNoCredentials", err)
	}
	// A project, but application default credentials that do not exist:
	// the credentials file is named, so nothing probes the network.
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", filepath.Join(t.TempDir(), "missing.json"))
	_, err = NewGemini(t.Context(), GeminiConfig{VertexAI: true, Project: "p", Location: "us-central1"})
	if !errors.Is(err, ErrNoCredentials) {
		t.Errorf("without default credentials: err = %v, want ErrNoCredentials", err)
	}
}
