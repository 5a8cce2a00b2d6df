package llm

import (
	"errors"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/runtime/llm/chatapi"
)

// HTTPStatus returns the HTTP status of a backend error: a Gemini API error,
// or an OpenAI-compatible server's.
func HTTPStatus(err error) (int, bool) {
	var ge genai.APIError
	if errors.As(err, &ge) {
		return ge.Code, true
	}
	var gp *genai.APIError
	if errors.As(err, &gp) && gp != nil {
		return gp.Code, true
	}
	var oe *chatapi.Error
	if errors.As(err, &oe) && oe != nil {
		return oe.StatusCode, true
	}
	return 0, false
}
