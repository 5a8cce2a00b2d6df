package llm

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/runtime/llm/chatapi"
)

// The kinds of classification a test expects.
const (
	kindUnchanged  = "unchanged"
	kindTerminal   = "terminal"
	kindRetryable  = "retryable"
	kindNotFound   = "not found"
	kindValidation = "validation"
)

// classified is what a test expects of Classify's result; empty strings are
// not checked, except that kind must match.
type classified struct {
	kind  string
	delay time.Duration
	// reason and capacity are checked for terminal errors.
	reason   string
	capacity bool
	// message is checked when set.
	message string
	// link, description and learnMore are checked for validation errors.
	link, description, learnMore string
	// retryable is IsRetryable's expected answer for the original error.
	retryable bool
}

// checkClassified asserts that got, the result of Classify(orig), is as want
// says, and that it still wraps orig.
func checkClassified(t *testing.T, orig, got error, want classified) {
	t.Helper()
	var (
		tq      *TerminalQuotaError
		rq      *RetryableQuotaError
		nf      *ModelNotFoundError
		vr      *ValidationRequiredError
		kind    = kindUnchanged
		message string
	)
	switch {
	case errors.As(got, &tq):
		kind, message = kindTerminal, tq.Message
	case errors.As(got, &rq):
		kind, message = kindRetryable, rq.Message
	case errors.As(got, &nf):
		kind, message = kindNotFound, nf.Message
	case errors.As(got, &vr):
		kind, message = kindValidation, vr.Message
	}
	if kind != want.kind {
		t.Fatalf("Classify(%v) = %v (%T), want %s", orig, got, got, want.kind)
	}
	if kind == kindUnchanged {
		if !sameError(got, orig) {
			t.Errorf("Classify returned %v (%T), want the error unchanged", got, got)
		}
	} else {
		// Wrapped, not replaced: the original stays reachable.
		if !sameError(errors.Unwrap(got), orig) {
			t.Errorf("%T does not wrap the original error", got)
		}
		if s1, ok1 := HTTPStatus(orig); ok1 {
			if s2, ok2 := HTTPStatus(got); !ok2 || s2 != s1 {
				t.Errorf("HTTPStatus of the classified error = %d, %v; want %d", s2, ok2, s1)
			}
		}
		if got.Error() == "" {
			t.Errorf("%T prints as an empty string", got)
		}
	}
	if want.message != "" && message != want.message {
		t.Errorf("Message = %q, want %q", message, want.message)
	}
	switch kind {
	case kindTerminal:
		if tq.RetryDelay != want.delay {
			t.Errorf("RetryDelay = %v, want %v", tq.RetryDelay, want.delay)
		}
		if tq.Reason != want.reason {
			t.Errorf("Reason = %q, want %q", tq.Reason, want.reason)
		}
		if tq.IsCapacity() != want.capacity {
			t.Errorf("IsCapacity() = %v, want %v", tq.IsCapacity(), want.capacity)
		}
	case kindRetryable:
		if rq.RetryDelay != want.delay {
			t.Errorf("RetryDelay = %v, want %v", rq.RetryDelay, want.delay)
		}
	case kindValidation:
		if vr.Link != want.link || vr.Description != want.description || vr.LearnMoreURL != want.learnMore {
			t.Errorf("validation = link %q, description %q, learn more %q; want %q, %q, %q",
				vr.Link, vr.Description, vr.LearnMoreURL, want.link, want.description, want.learnMore)
		}
	}
	// Classifying again changes nothing.
	if again := Classify(got); !sameError(again, got) {
		t.Errorf("Classify of a classified error returned %v (%T), want it as is", again, again)
	}
	if r := IsRetryable(orig); r != want.retryable {
		t.Errorf("IsRetryable(%v) = %v, want %v", orig, r, want.retryable)
	}
}

// sameError reports whether a and b are the same error. genai.APIError values
// hold a slice, so comparing them with == would panic.
func sameError(a, b error) bool {
	ta := reflect.TypeOf(a)
	if ta != reflect.TypeOf(b) {
		return false
	}
	if ta == nil || ta.Comparable() {
		return a == b
	}
	return reflect.DeepEqual(a, b)
}

// Detail builders, in the shape the genai client decodes details into.

func errorInfo(reason, domain string, metadata map[string]any) map[string]any {
	d := map[string]any{"@type": fakegemini.TypeErrorInfo, "reason": reason}
	if domain != "" {
		d["domain"] = domain
	}
	if metadata != nil {
		d["metadata"] = metadata
	}
	return d
}

func retryInfo(delay string) map[string]any {
	return map[string]any{"@type": fakegemini.TypeRetryInfo, "retryDelay": delay}
}

func quotaFailure(quotaIDs ...string) map[string]any {
	var vs []any
	for _, id := range quotaIDs {
		vs = append(vs, map[string]any{"subject": "user", "quotaId": id})
	}
	return map[string]any{"@type": fakegemini.TypeQuotaFailure, "violations": vs}
}

// help builds a Help detail from description, URL pairs.
func help(links ...[2]string) map[string]any {
	var ls []any
	for _, l := range links {
		ls = append(ls, map[string]any{"description": l[0], "url": l[1]})
	}
	return map[string]any{"@type": fakegemini.TypeHelp, "links": ls}
}

func apiError(code int, message string, details ...map[string]any) genai.APIError {
	return genai.APIError{Code: code, Message: message, Status: http.StatusText(code), Details: details}
}

const (
	cloudCode    = "cloudcode-pa.googleapis.com"
	freeTierBody = "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head to: https://ai.dev/usage?tab=rate-limit. "
)

// nestedQuotaError is the double-encoded error gemini-cli's tests take from a
// user report: an error body whose message is another error body, in the
// message of a plain error.
func nestedQuotaError(t *testing.T, innerMessage string) error {
	t.Helper()
	inner := `{"error": {"code": 429, "status": 429, "message": "` + innerMessage + `", "details": [{"detail": "??? to (unknown) : APP_ERROR(8) ` + innerMessage + `"}]}}`
	outer, err := json.Marshal(map[string]any{"error": map[string]any{"message": inner, "code": 429, "status": "Too Many Requests"}})
	if err != nil {
		t.Fatal(err)
	}
	return errors.New(string(outer))
}

// TestClassifyGoogle mirrors gemini-cli's googleQuotaErrors.test.ts case by
// case (in its order), then adds the shapes only the Go client produces.
// gemini-cli's tests mock the parser; here the Go equivalent of each input
// goes through the real one.
func TestClassifyGoogle(t *testing.T) {
	tests := []struct {
		name string
		err  func(t *testing.T) error
		want classified
	}{{
		name: "not a Google API error",
		err:  func(*testing.T) error { return errors.New("Something went wrong") },
		want: classified{kind: kindUnchanged},
	}, {
		name: "Please retry in Xs inside a nested JSON message",
		err: func(t *testing.T) error {
			return nestedQuotaError(t, freeTierBody+"\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 2\nPlease retry in 44.097740004s.")
		},
		want: classified{kind: kindRetryable, delay: 44097740004 * time.Nanosecond},
	}, {
		name: "Please retry in Xms inside a nested JSON message",
		err: func(t *testing.T) error {
			return nestedQuotaError(t, freeTierBody+"\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 2\nPlease retry in 900.2ms.")
		},
		want: classified{kind: kindRetryable, delay: 900200 * time.Microsecond},
	}, {
		name: "503 Service Unavailable",
		err:  func(*testing.T) error { return apiError(503, "Service Unavailable") },
		want: classified{kind: kindRetryable, message: "Service Unavailable", retryable: true},
	}, {
		name: "MODEL_CAPACITY_EXHAUSTED with RetryInfo",
		err: func(*testing.T) error {
			return apiError(503, "No capacity available for model gemini-3.1-pro-preview on the server",
				errorInfo("MODEL_CAPACITY_EXHAUSTED", cloudCode, map[string]any{"model": "gemini-3.1-pro-preview"}),
				retryInfo("9s"))
		},
		want: classified{kind: kindTerminal, reason: "MODEL_CAPACITY_EXHAUSTED", capacity: true, delay: 9 * time.Second, retryable: true},
	}, {
		name: "MODEL_CAPACITY_EXHAUSTED without delay",
		err: func(*testing.T) error {
			return apiError(429, "No capacity available for model gemini-3.1-pro-preview on the server",
				errorInfo("MODEL_CAPACITY_EXHAUSTED", cloudCode, map[string]any{"model": "gemini-3.1-pro-preview"}))
		},
		want: classified{kind: kindTerminal, reason: "MODEL_CAPACITY_EXHAUSTED", capacity: true, retryable: true},
	}, {
		name: "details with a capacity phrase in the message",
		err: func(*testing.T) error {
			return apiError(429, "You have exhausted your capacity on this model.", help([2]string{"Learn more", "https://support.google.com"}))
		},
		want: classified{kind: kindTerminal, capacity: true, retryable: true},
	}, {
		name: "MODEL_CAPACITY_EXHAUSTED from another domain",
		err: func(*testing.T) error {
			return apiError(429, "No capacity available for model gemini-3.1-pro-preview on the server",
				errorInfo("MODEL_CAPACITY_EXHAUSTED", "other.googleapis.com", map[string]any{"model": "gemini-3.1-pro-preview"}))
		},
		want: classified{kind: kindTerminal, reason: "MODEL_CAPACITY_EXHAUSTED", capacity: true, retryable: true},
	}, {
		name: "MODEL_CAPACITY_EXCEEDED",
		err: func(*testing.T) error {
			return apiError(429, "No capacity available for model gemini-3.1-pro-preview on the server",
				errorInfo("MODEL_CAPACITY_EXCEEDED", cloudCode, map[string]any{"model": "gemini-3.1-pro-preview"}))
		},
		want: classified{kind: kindTerminal, reason: "MODEL_CAPACITY_EXCEEDED", capacity: true, retryable: true},
	}, {
		name: "500 is left alone",
		err:  func(*testing.T) error { return apiError(500, "Server error") },
		want: classified{kind: kindUnchanged, retryable: true},
	}, {
		name: "499 Client Closed Request",
		err:  func(*testing.T) error { return apiError(499, "Client Closed Request") },
		want: classified{kind: kindRetryable, message: "Client Closed Request", retryable: true},
	}, {
		name: "daily quota in QuotaFailure",
		err:  func(*testing.T) error { return apiError(429, "Quota exceeded", quotaFailure("RequestsPerDay-limit")) },
		want: classified{kind: kindTerminal, message: "You have exhausted your daily quota on this model.", retryable: true},
	}, {
		name: "RetryInfo over 5 minutes",
		err:  func(*testing.T) error { return apiError(429, "Too many requests", retryInfo("301s")) },
		want: classified{kind: kindTerminal, delay: 301 * time.Second, message: "Too many requests\nSuggested retry after 301s.", retryable: true},
	}, {
		name: "short RetryInfo",
		err:  func(*testing.T) error { return apiError(429, "Too many requests", retryInfo("45.123s")) },
		want: classified{kind: kindRetryable, delay: 45123 * time.Millisecond, message: "Too many requests\nSuggested retry after 45.123s.", retryable: true},
	}, {
		name: "per-minute quota in QuotaFailure",
		err: func(*testing.T) error {
			return apiError(429, "Quota exceeded", quotaFailure("RequestsPerMinute-limit"))
		},
		want: classified{kind: kindRetryable, delay: time.Minute, message: "Quota exceeded\nSuggested retry after 60s.", retryable: true},
	}, {
		name: "per-minute quota in ErrorInfo",
		err: func(*testing.T) error {
			return apiError(429, "Quota exceeded", errorInfo("QUOTA_EXCEEDED", "googleapis.com", map[string]any{"quota_limit": "RequestsPerMinute_PerProject_PerUser"}))
		},
		want: classified{kind: kindRetryable, delay: time.Minute, message: "QUOTA_EXCEEDED\nSuggested retry after 60s.", retryable: true},
	}, {
		name: "free tier per-minute quota with RetryInfo",
		err: func(*testing.T) error {
			return apiError(429, "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 2\nPlease retry in 56.185908122s.",
				map[string]any{"@type": fakegemini.TypeQuotaFailure, "violations": []any{map[string]any{
					"quotaMetric":     "generativelanguage.googleapis.com/generate_content_free_tier_requests",
					"quotaId":         "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
					"quotaDimensions": map[string]any{"location": "global", "model": "gemini-2.5-pro"},
					"quotaValue":      "2",
				}}},
				help([2]string{"Learn more about Gemini API quotas", "https://ai.google.dev/gemini-api/docs/rate-limits"}),
				retryInfo("56s"))
		},
		want: classified{kind: kindRetryable, delay: 56 * time.Second, retryable: true},
	}, {
		name: "Cloud Code RATE_LIMIT_EXCEEDED with delay",
		err: func(*testing.T) error {
			return apiError(429, "You have exhausted your capacity on this model. Your quota will reset after 0s.",
				errorInfo("RATE_LIMIT_EXCEEDED", cloudCode, map[string]any{"uiMessage": "true", "model": "gemini-2.5-pro", "quotaResetDelay": "539.477544ms", "quotaResetTimeStamp": "2025-10-20T19:14:08Z"}),
				retryInfo("0.539477544s"))
		},
		want: classified{kind: kindRetryable, delay: 539477544 * time.Nanosecond, retryable: true},
	}, {
		name: "Cloud Code RATE_LIMIT_EXCEEDED over 5 minutes",
		err: func(*testing.T) error {
			return apiError(429, "You have exhausted your capacity on this model. Your quota will reset after 10m.",
				errorInfo("RATE_LIMIT_EXCEEDED", cloudCode, map[string]any{"uiMessage": "true", "model": "gemini-2.5-pro"}),
				retryInfo("600s"))
		},
		// The message's capacity phrase makes IsCapacity true, as
		// gemini-cli's isCapacity check on the message would.
		want: classified{kind: kindTerminal, reason: "RATE_LIMIT_EXCEEDED", delay: 10 * time.Minute, capacity: true, retryable: true},
	}, {
		name: "Cloud Code RATE_LIMIT_EXCEEDED without delay",
		err: func(*testing.T) error {
			return apiError(429, "Rate limit exceeded", errorInfo("RATE_LIMIT_EXCEEDED", cloudCode, map[string]any{"uiMessage": "true", "model": "gemini-2.5-pro"}))
		},
		want: classified{kind: kindTerminal, reason: "RATE_LIMIT_EXCEEDED", retryable: true},
	}, {
		name: "Cloud Code QUOTA_EXHAUSTED",
		err: func(*testing.T) error {
			return apiError(429, "You have exhausted your capacity on this model. Your quota will reset after 0s.",
				errorInfo("QUOTA_EXHAUSTED", cloudCode, map[string]any{"uiMessage": "true", "model": "gemini-2.5-pro", "quotaResetDelay": "539.477544ms"}),
				retryInfo("0.539477544s"))
		},
		want: classified{kind: kindTerminal, reason: "QUOTA_EXHAUSTED", delay: 539477544 * time.Nanosecond, capacity: true, retryable: true},
	}, {
		name: "INSUFFICIENT_G1_CREDITS_BALANCE without domain",
		err: func(*testing.T) error {
			return apiError(429, "Resource has been exhausted (e.g. check quota).", errorInfo("INSUFFICIENT_G1_CREDITS_BALANCE", "", nil))
		},
		want: classified{kind: kindTerminal, reason: "INSUFFICIENT_G1_CREDITS_BALANCE", retryable: true},
	}, {
		name: "daily limit wins over RetryInfo",
		err: func(*testing.T) error {
			return apiError(429, "Quota exceeded", quotaFailure("RequestsPerDay-limit"), retryInfo("10s"))
		},
		want: classified{kind: kindTerminal, retryable: true},
	}, {
		name: "any 429 with unknown details",
		err: func(*testing.T) error {
			return apiError(429, "Too many requests", map[string]any{"@type": "type.googleapis.com/google.rpc.DebugInfo", "detail": "some debug info", "stackEntries": []any{}})
		},
		want: classified{kind: kindRetryable, message: "Too many requests", retryable: true},
	}, {
		name: "404 in a doubly nested JSON message",
		err: func(t *testing.T) error {
			inner := oaiMustJSON(t, map[string]any{"error": map[string]any{
				"code":    404,
				"message": "models/NOT_FOUND is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.",
				"status":  "NOT_FOUND",
			}})
			outer := oaiMustJSON(t, map[string]any{"error": map[string]any{"message": inner}})
			return errors.New("[API Error: " + outer + "]")
		},
		want: classified{kind: kindNotFound, message: "models/NOT_FOUND is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods."},
	}, {
		name: "Please retry in with empty details",
		err:  func(*testing.T) error { return apiError(429, "Resource exhausted. Please retry in 5s") },
		want: classified{kind: kindRetryable, delay: 5 * time.Second, message: "Resource exhausted. Please retry in 5s", retryable: true},
	}, {
		name: "Please retry in over 5 minutes",
		err:  func(*testing.T) error { return apiError(429, "Resource exhausted. Please retry in 400s") },
		want: classified{kind: kindTerminal, delay: 400 * time.Second, retryable: true},
	}, {
		name: "RetryInfo of exactly 5 minutes",
		err:  func(*testing.T) error { return apiError(429, "Too many requests", retryInfo("300s")) },
		want: classified{kind: kindRetryable, delay: 300 * time.Second, retryable: true},
	}, {
		name: "generic 429",
		err:  func(*testing.T) error { return apiError(429, "Resource exhausted. No specific retry info.") },
		want: classified{kind: kindRetryable, retryable: true},
	}, {
		name: "429 with empty details and no hint",
		err:  func(*testing.T) error { return apiError(429, "A generic 429 error with no retry message.") },
		want: classified{kind: kindRetryable, retryable: true},
	}, {
		name: "429 with an ErrorInfo that matches no rule",
		err: func(*testing.T) error {
			return apiError(429, "A generic 429 error with no retry message.", errorInfo("QUOTA_EXCEEDED", "googleapis.com", map[string]any{"quota_limit": ""}))
		},
		want: classified{kind: kindRetryable, retryable: true},
	}, {
		name: "403 VALIDATION_REQUIRED with Help links",
		err: func(*testing.T) error {
			return apiError(403, "Validation required to continue.",
				errorInfo("VALIDATION_REQUIRED", cloudCode, map[string]any{"validation_link": "https://fallback.example.com/validate"}),
				help([2]string{"Complete validation to continue", "https://example.com/validate"},
					[2]string{"Learn more", "https://support.google.com/accounts?p=al_alert"}))
		},
		want: classified{kind: kindValidation, message: "Validation required to continue.", link: "https://example.com/validate",
			description: "Complete validation to continue", learnMore: "https://support.google.com/accounts?p=al_alert"},
	}, {
		name: "403 VALIDATION_REQUIRED whose first link mentions Learn more",
		err: func(*testing.T) error {
			return apiError(403, "Validation required to continue.",
				errorInfo("VALIDATION_REQUIRED", cloudCode, map[string]any{}),
				help([2]string{"Further action is required to use this service. Navigate to the following URL to complete verification:\n\nhttps://accounts.sandbox.google.com/signin/continue?...\n\nLearn more:\n\nhttps://support.google.com/accounts?p=al_alert\n",
					"https://accounts.sandbox.google.com/signin/continue?sarp=1&scc=1&continue=..."},
					[2]string{"Learn more", "https://support.google.com/accounts?p=al_alert"}))
		},
		want: classified{kind: kindValidation, link: "https://accounts.sandbox.google.com/signin/continue?sarp=1&scc=1&continue=...",
			description: "Further action is required to use this service. Navigate to the following URL to complete verification:\n\nhttps://accounts.sandbox.google.com/signin/continue?...\n\nLearn more:\n\nhttps://support.google.com/accounts?p=al_alert\n",
			learnMore:   "https://support.google.com/accounts?p=al_alert"},
	}, {
		name: "403 VALIDATION_REQUIRED without Help uses validation_link",
		err: func(*testing.T) error {
			return apiError(403, "Validation required.",
				errorInfo("VALIDATION_REQUIRED", "staging-cloudcode-pa.googleapis.com", map[string]any{"validation_link": "https://staging.example.com/validate"}))
		},
		want: classified{kind: kindValidation, link: "https://staging.example.com/validate"},
	}, {
		name: "403 with another reason",
		err: func(*testing.T) error {
			return apiError(403, "Access denied.", errorInfo("ACCESS_DENIED", cloudCode, map[string]any{}))
		},
		want: classified{kind: kindUnchanged},
	}, {
		name: "403 VALIDATION_REQUIRED finds Learn more by host",
		err: func(*testing.T) error {
			return apiError(403, "Validation required.",
				errorInfo("VALIDATION_REQUIRED", cloudCode, map[string]any{}),
				help([2]string{"Complete validation", "https://accounts.google.com/validate"},
					[2]string{"More information", "https://support.google.com/accounts?p=al_alert"}))
		},
		want: classified{kind: kindValidation, link: "https://accounts.google.com/validate", description: "Complete validation",
			learnMore: "https://support.google.com/accounts?p=al_alert"},
	}, {
		name: "403 VALIDATION_REQUIRED from another domain",
		err: func(*testing.T) error {
			return apiError(403, "Forbidden.", errorInfo("VALIDATION_REQUIRED", "other.googleapis.com", map[string]any{}))
		},
		want: classified{kind: kindUnchanged},
	}, {
		name: "QUOTA_EXHAUSTED with an SSE-corrupted domain",
		err: func(*testing.T) error {
			return apiError(429, "You have exhausted your capacity on this model. Your quota will reset after 19h14m47s.",
				errorInfo("QUOTA_EXHAUSTED", cloudCode+",", map[string]any{"uiMessage": "true", "model": "gemini-3-flash-preview"}),
				retryInfo("68940s"))
		},
		want: classified{kind: kindTerminal, reason: "QUOTA_EXHAUSTED", delay: 68940 * time.Second, capacity: true, retryable: true},
	}, {
		name: "VALIDATION_REQUIRED with an SSE-corrupted domain",
		err: func(*testing.T) error {
			return apiError(403, "Forbidden.", errorInfo("VALIDATION_REQUIRED", cloudCode+",", map[string]any{"validationUrl": "https://example.com/validate"}))
		},
		want: classified{kind: kindValidation},
	}, {
		name: "limit: 0 wins over Please retry in",
		err: func(t *testing.T) error {
			return nestedQuotaError(t, freeTierBody+`\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 0\nPlease retry in 59.906331105s.`)
		},
		want: classified{kind: kindTerminal},
	}, {
		name: "limit: 0 wins over RetryInfo",
		err:  func(*testing.T) error { return apiError(429, "Quota exceeded for limit: 0", retryInfo("59s")) },
		want: classified{kind: kindTerminal, retryable: true},
	}, {
		name: "limit: 0 after a newline",
		err: func(*testing.T) error {
			return apiError(429, "Quota exceeded for metric: ...\nlimit: 0, model: gemini-3-pro")
		},
		want: classified{kind: kindTerminal, retryable: true},
	}, {
		name: "limit: 0 followed by a period",
		err: func(*testing.T) error {
			return apiError(429, "Quota exceeded for metric: ...\nlimit: 0. Please retry in 59s.")
		},
		want: classified{kind: kindTerminal, retryable: true},
	}, {
		name: "fractional limit: 0.5",
		err: func(*testing.T) error {
			return apiError(429, "Quota exceeded for metric: ...\nlimit: 0.5. Please retry in 59s.")
		},
		want: classified{kind: kindRetryable, delay: 59 * time.Second, retryable: true},
	}, {
		name: "404 without a message",
		err:  func(*testing.T) error { return genai.APIError{Code: 404} },
		want: classified{kind: kindNotFound, message: "Model not found"},
	}, {
		name: "404 with a message",
		err:  func(*testing.T) error { return genai.APIError{Code: 404, Message: "Custom 404 message"} },
		want: classified{kind: kindNotFound, message: "Custom 404 message"},
	}, {
		name: "429 limit: 0 without details",
		err:  func(*testing.T) error { return genai.APIError{Code: 429, Message: "Quota exceeded, limit: 0"} },
		want: classified{kind: kindTerminal, retryable: true},
	}, {
		name: "error without a message",
		err:  func(*testing.T) error { return errors.New("") },
		want: classified{kind: kindUnchanged},
	}, {
		// Shapes of the Go client and of Go error handling.
		name: "Code Assist array-wrapped body",
		err: func(t *testing.T) error {
			body := "[" + fakegemini.ErrorBody(429, "RESOURCE_EXHAUSTED", "Quota exceeded.",
				fakegemini.ErrorInfo("RATE_LIMIT_EXCEEDED", cloudCode, nil), fakegemini.RetryInfo(1500*time.Millisecond)) + "]"
			return genai.APIError{Code: 429, Status: "429 Too Many Requests", Message: body}
		},
		want: classified{kind: kindRetryable, delay: 1500 * time.Millisecond, message: "Quota exceeded.", retryable: true},
	}, {
		name: "Code Assist body with SSE-injected commas and newlines",
		err: func(*testing.T) error {
			body := `[{"error": {"code": 429, "message": "Quota gone.", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "QUOTA_EXHAUSTED", "domain": "cloudcode-pa.googleapis.com",` + "\n" + ` ,   "metadata": {"model": "m"}}]}}]`
			return genai.APIError{Code: 429, Status: "429 Too Many Requests", Message: body}
		},
		want: classified{kind: kindTerminal, reason: "QUOTA_EXHAUSTED", message: "Quota gone.", retryable: true},
	}, {
		name: "detail key with stray whitespace",
		err: func(*testing.T) error {
			return apiError(429, "Quota exceeded", map[string]any{" @type ": fakegemini.TypeQuotaFailure, "violations": []any{map[string]any{"quotaId": "RequestsPerDay"}}})
		},
		want: classified{kind: kindTerminal, message: "You have exhausted your daily quota on this model.", retryable: true},
	}, {
		name: "details built from Go maps and slices",
		err: func(*testing.T) error {
			return apiError(429, "Quota exceeded", map[string]any{"@type": fakegemini.TypeQuotaFailure,
				"violations": []map[string]string{{"quotaId": "RequestsPerMinute"}}})
		},
		want: classified{kind: kindRetryable, delay: time.Minute, retryable: true},
	}, {
		name: "wrapped pointer APIError",
		err: func(*testing.T) error {
			e := apiError(404, "models/x is not found")
			return fmt.Errorf("generate: %w", &e)
		},
		want: classified{kind: kindNotFound, message: "models/x is not found"},
	}, {
		name: "wrapped value APIError",
		err: func(*testing.T) error {
			return fmt.Errorf("generate: %w", apiError(429, "Too many requests", retryInfo("2s")))
		},
		want: classified{kind: kindRetryable, delay: 2 * time.Second, retryable: true},
	}, {
		name: "APIError with neither message nor body",
		err:  func(*testing.T) error { return genai.APIError{Code: 503, Status: "503 Service Unavailable"} },
		want: classified{kind: kindRetryable, message: "503 Service Unavailable", retryable: true},
	}, {
		name: "plain-text body with a retry hint",
		err: func(*testing.T) error {
			return genai.APIError{Code: 429, Status: "429 Too Many Requests", Message: "Slow down. Please retry in 2.5s."}
		},
		want: classified{kind: kindRetryable, delay: 2500 * time.Millisecond, retryable: true},
	}, {
		name: "retry hint on a 500 counts too",
		err:  func(*testing.T) error { return apiError(500, "Backend busy. Please retry in 3s.") },
		want: classified{kind: kindRetryable, delay: 3 * time.Second, retryable: true},
	}, {
		name: "retry hint in a non-API error",
		err:  func(*testing.T) error { return errors.New("proxy: Please retry in 250ms") },
		want: classified{kind: kindRetryable, delay: 250 * time.Millisecond},
	}, {
		name: "limit: 05 is not zero",
		err:  func(*testing.T) error { return apiError(429, "Quota exceeded, limit: 05") },
		want: classified{kind: kindRetryable, retryable: true},
	}, {
		name: "RATE_LIMIT_EXCEEDED with a zero delay counts as none",
		err: func(*testing.T) error {
			return apiError(429, "Rate limit exceeded", errorInfo("RATE_LIMIT_EXCEEDED", cloudCode, nil), retryInfo("0s"))
		},
		want: classified{kind: kindTerminal, reason: "RATE_LIMIT_EXCEEDED", retryable: true},
	}, {
		name: "RATE_LIMIT_EXCEEDED outside Cloud Code falls through to RetryInfo",
		err: func(*testing.T) error {
			return apiError(429, "Rate limit exceeded", errorInfo("RATE_LIMIT_EXCEEDED", "googleapis.com", nil), retryInfo("4s"))
		},
		want: classified{kind: kindRetryable, delay: 4 * time.Second, retryable: true},
	}, {
		name: "400 is left alone",
		err:  func(*testing.T) error { return apiError(400, "Invalid JSON payload received.") },
		want: classified{kind: kindUnchanged},
	}, {
		name: "500 with details is left alone",
		err:  func(*testing.T) error { return apiError(500, "Internal error", retryInfo("5s")) },
		want: classified{kind: kindUnchanged, retryable: true},
	}, {
		name: "mid-stream error with the body's status",
		err: func(*testing.T) error {
			return genai.APIError{Code: 503, Status: "UNAVAILABLE", Message: "The model is overloaded. Please try again later."}
		},
		want: classified{kind: kindRetryable, retryable: true},
	}, {
		name: "a transport error is left alone",
		err: func(*testing.T) error {
			return &url.Error{Op: "Post", URL: "https://x", Err: &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}}
		},
		want: classified{kind: kindUnchanged, retryable: true},
	}, {
		name: "context cancellation is left alone",
		err:  func(*testing.T) error { return fmt.Errorf("generate: %w", context.Canceled) },
		want: classified{kind: kindUnchanged},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err(t)
			checkClassified(t, err, Classify(err), tt.want)
		})
	}
}

// TestClassifyNesting checks that error bodies nested in the messages of the
// outermost one are unwrapped up to ten levels and no further, as gemini-cli's
// parser does, wherever the outermost body is found.
func TestClassifyNesting(t *testing.T) {
	// nest returns the JSON of an error body with levels more bodies nested
	// in messages, the innermost a 404.
	nest := func(levels int) string {
		body := oaiMustJSON(t, map[string]any{"error": map[string]any{"code": 404, "message": "deep"}})
		for range levels {
			body = oaiMustJSON(t, map[string]any{"error": map[string]any{"message": body}})
		}
		return body
	}
	outermost := map[string]func(string) error{
		"in an error's text": func(body string) error { return errors.New("[API Error: " + body + "]") },
		"in a Code Assist array": func(body string) error {
			return genai.APIError{Code: 500, Status: "500 Internal Server Error", Message: "[" + body + "]"}
		},
		"decoded by the client": func(body string) error {
			var e struct{ Error genai.APIError }
			if err := json.Unmarshal([]byte(body), &e); err != nil {
				t.Fatal(err)
			}
			return e.Error
		},
	}
	for name, wrap := range outermost {
		if err := wrap(nest(10)); !errors.As(Classify(err), new(*ModelNotFoundError)) {
			t.Errorf("%s, 10 levels: Classify = %v, want ModelNotFoundError", name, Classify(err))
		}
		if err := wrap(nest(11)); !sameError(Classify(err), err) {
			t.Errorf("%s, 11 levels: Classify = %v, want the error unchanged", name, Classify(err))
		}
	}
}

// TestClassifyKeepsDetails checks that classification leaves the caller's
// error untouched while normalising detail keys.
func TestClassifyKeepsDetails(t *testing.T) {
	d := map[string]any{" @type": fakegemini.TypeRetryInfo, "retryDelay": "3s"}
	err := apiError(429, "slow down", d)
	checkClassified(t, err, Classify(err), classified{kind: kindRetryable, delay: 3 * time.Second, message: "slow down\nSuggested retry after 3s.", retryable: true})
	if _, ok := d[" @type"]; !ok || len(d) != 2 {
		t.Errorf("detail map changed to %v", d)
	}
}

func TestClassifyNil(t *testing.T) {
	if err := Classify(nil); err != nil {
		t.Errorf("Classify(nil) = %v", err)
	}
	if IsRetryable(nil) {
		t.Error("IsRetryable(nil) = true")
	}
}

func TestClassifiedAsIs(t *testing.T) {
	for _, err := range []error{
		&TerminalQuotaError{Message: "m"},
		&RetryableQuotaError{Message: "m"},
		&ModelNotFoundError{Message: "m"},
		&ValidationRequiredError{Message: "m"},
		// Wrapped, and wrapping something Classify would read differently.
		fmt.Errorf("turn: %w", &RetryableQuotaError{Message: "m", Err: apiError(404, "gone")}),
	} {
		if got := Classify(err); got != err {
			t.Errorf("Classify(%v) = %v, want it as is", err, got)
		}
	}
}

func TestTerminalQuotaErrorPredicates(t *testing.T) {
	tests := []struct {
		err                 TerminalQuotaError
		capacity, noCredits bool
	}{
		{TerminalQuotaError{Reason: "MODEL_CAPACITY_EXHAUSTED"}, true, false},
		{TerminalQuotaError{Reason: "MODEL_CAPACITY_EXCEEDED"}, true, false},
		{TerminalQuotaError{Message: "Model capacity EXCEEDED for now"}, true, false},
		{TerminalQuotaError{Message: "error model_capacity_exhausted"}, true, false},
		{TerminalQuotaError{Reason: "QUOTA_EXHAUSTED", Message: "daily quota"}, false, false},
		{TerminalQuotaError{Reason: "INSUFFICIENT_G1_CREDITS_BALANCE"}, false, true},
	}
	for _, tt := range tests {
		if got := tt.err.IsCapacity(); got != tt.capacity {
			t.Errorf("%+v: IsCapacity() = %v", tt.err, got)
		}
		if got := tt.err.IsInsufficientCredits(); got != tt.noCredits {
			t.Errorf("%+v: IsInsufficientCredits() = %v", tt.err, got)
		}
	}
}

func TestParseDurationSeconds(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"15s", 15, true},
		{"0.5s", 0.5, true},
		{"34.074824224s", 34.074824224, true},
		{"900ms", 0.9, true},
		{"1.5.2s", 1.5, true}, // parseFloat reads the numeric prefix
		{"1e2s", 100, true},
		{" 7s", 7, true},
		{"-3s", -3, true},
		{"s", 0, false},
		{"abcs", 0, false},
		{"15", 0, false},
		{"15m", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseDurationSeconds(tt.in)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("parseDurationSeconds(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if d := secondsToDuration(-3); d != 0 {
		t.Errorf("secondsToDuration(-3) = %v, want 0", d)
	}
	if d := secondsToDuration(1e300); d <= MaxRetryDelay {
		t.Errorf("secondsToDuration(1e300) = %v, want the longest duration", d)
	}
}

// oaiAPIError builds the *chatapi.Error the client returns for a response
// of status with the given error fields and headers.
func oaiAPIError(status int, code, typ, message string, header http.Header) *chatapi.Error {
	if header == nil {
		header = http.Header{}
	}
	return &chatapi.Error{
		Method: http.MethodPost, URL: "http://127.0.0.1/v1/chat/completions",
		StatusCode: status, Code: code, Type: typ, Message: message,
		Header: header,
	}
}

func TestClassifyOpenAI(t *testing.T) {
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	tests := []struct {
		name string
		err  error
		want classified
	}{
		{"429 with Retry-After seconds", oaiAPIError(429, "rate_limit_exceeded", "requests", "Rate limit reached", hdr("Retry-After", "7")),
			classified{kind: kindRetryable, delay: 7 * time.Second, message: "Rate limit reached", retryable: true}},
		{"429 with fractional Retry-After", oaiAPIError(429, "", "", "slow", hdr("Retry-After", "1.5")),
			classified{kind: kindRetryable, delay: 1500 * time.Millisecond, retryable: true}},
		{"retry-after-ms wins", oaiAPIError(429, "", "", "slow", hdr("Retry-After", "7", "retry-after-ms", "250")),
			classified{kind: kindRetryable, delay: 250 * time.Millisecond, retryable: true}},
		{"429 without Retry-After", oaiAPIError(429, "", "", "slow", nil),
			classified{kind: kindRetryable, retryable: true}},
		{"429 with an unparsable Retry-After", oaiAPIError(429, "", "", "slow", hdr("Retry-After", "soon")),
			classified{kind: kindRetryable, retryable: true}},
		{"429 with a past Retry-After date", oaiAPIError(429, "", "", "slow", hdr("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT")),
			classified{kind: kindRetryable, retryable: true}},
		{"Retry-After of exactly 5 minutes", oaiAPIError(429, "", "", "slow", hdr("Retry-After", "300")),
			classified{kind: kindRetryable, delay: 300 * time.Second, retryable: true}},
		{"Retry-After over 5 minutes", oaiAPIError(429, "", "", "slow", hdr("Retry-After", "301")),
			classified{kind: kindTerminal, delay: 301 * time.Second, retryable: true}},
		{"insufficient_quota code", oaiAPIError(429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota", hdr("Retry-After", "1")),
			classified{kind: kindTerminal, reason: "insufficient_quota", message: "You exceeded your current quota", retryable: true}},
		{"insufficient_quota type only", oaiAPIError(429, "", "insufficient_quota", "no credit", nil),
			classified{kind: kindTerminal, reason: "insufficient_quota", retryable: true}},
		{"404", oaiAPIError(404, "model_not_found", "invalid_request_error", "The model `x` does not exist", nil),
			classified{kind: kindNotFound, message: "The model `x` does not exist"}},
		{"404 without a message uses the error text", fmt.Errorf("chat completion: %w", oaiAPIError(404, "", "", "", nil)),
			classified{kind: kindNotFound}},
		{"503 is left alone", oaiAPIError(503, "", "server_error", "overloaded", hdr("Retry-After", "2")),
			classified{kind: kindUnchanged, retryable: true}},
		{"500 is left alone", oaiAPIError(500, "", "", "boom", nil), classified{kind: kindUnchanged, retryable: true}},
		{"400 is left alone", oaiAPIError(400, "", "invalid_request_error", "bad", nil), classified{kind: kindUnchanged}},
		{"401 is left alone", oaiAPIError(401, "invalid_api_key", "", "bad key", nil), classified{kind: kindUnchanged}},
		// OpenAI's "limit: 0"-like texts are not Google's: the Gemini
		// rules do not apply.
		{"Gemini rules do not apply", oaiAPIError(429, "", "", "limit: 0", nil), classified{kind: kindRetryable, retryable: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkClassified(t, tt.err, Classify(tt.err), tt.want)
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		header http.Header
		want   time.Duration
	}{
		{nil, 0},
		{http.Header{"Retry-After": {"12"}}, 12 * time.Second},
		{http.Header{"Retry-After": {" 3 "}}, 3 * time.Second},
		{http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{http.Header{"Retry-After": {now.Add(time.Hour).Format(time.RFC850)}}, time.Hour},
		{http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After": {"-4"}}, 0},
		{http.Header{"Retry-After": {"Inf"}}, 0},
		{http.Header{"Retry-After-Ms": {"1500"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"junk"}, "Retry-After": {"2"}}, 2 * time.Second},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.header, now); got != tt.want {
			t.Errorf("retryAfter(%v) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

// timeoutErr is a net.Error timeout, such as net/http's own.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestIsRetryable(t *testing.T) {
	opErr := func(errno syscall.Errno) error {
		return &url.Error{Op: "Post", URL: "https://generativelanguage.googleapis.com", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", errno)}}
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"plain error", errors.New("boom"), false},
		{"ECONNRESET", opErr(syscall.ECONNRESET), true},
		{"ETIMEDOUT", opErr(syscall.ETIMEDOUT), true},
		{"EPIPE", opErr(syscall.EPIPE), true},
		{"ECONNREFUSED", opErr(syscall.ECONNREFUSED), true},
		{"EPROTO", opErr(syscall.EPROTO), true},
		{"ENOENT is not a network error", opErr(syscall.ENOENT), false},
		{"DNS not found (ENOTFOUND)", &url.Error{Op: "Post", URL: "https://x", Err: &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}}}, true},
		{"DNS temporary (EAI_AGAIN)", &net.DNSError{Err: "try again", Name: "x", IsTemporary: true}, true},
		{"TLS to a non-TLS server", &url.Error{Op: "Post", URL: "https://x", Err: tls.RecordHeaderError{Msg: "tls: first record does not look like a TLS handshake"}}, true},
		{"HTTP answer to an HTTPS client", &url.Error{Op: "Post", URL: "https://x", Err: errors.New(errHTTPToHTTPS)}, true},
		{"bad record MAC alert", &url.Error{Op: "Post", URL: "https://x", Err: &net.OpError{Op: "remote error", Err: tls.AlertError(20)}}, true},
		{"bad record MAC alert value", tls.AlertError(20), true},
		{"handshake failure alert", &net.OpError{Op: "remote error", Err: tls.AlertError(40)}, false},
		{"certificate error", &url.Error{Op: "Post", URL: "https://x", Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}}, false},
		{"net timeout", &url.Error{Op: "Post", URL: "https://x", Err: timeoutErr{}}, true},
		{"deadline of a connection", fmt.Errorf("read: %w", os.ErrDeadlineExceeded), true},
		{"body cut off", fmt.Errorf("stream broke off: %w", io.ErrUnexpectedEOF), true},
		{"connection closed before a response", &url.Error{Op: "Post", URL: "https://x", Err: io.EOF}, true},
		{"io.EOF alone", io.EOF, false},
		{"joined errors", errors.Join(errors.New("first"), opErr(syscall.ECONNRESET)), true},
		{"caller cancelled", context.Canceled, false},
		{"caller deadline", context.DeadlineExceeded, false},
		{"caller cancelled during a request", &url.Error{Op: "Post", URL: "https://x", Err: context.Canceled}, false},
		{"caller deadline during a request", &url.Error{Op: "Post", URL: "https://x", Err: context.DeadlineExceeded}, false},
		{"cancellation wrapping a transport error", fmt.Errorf("%w: %w", context.Canceled, io.ErrUnexpectedEOF), false},
		{"Gemini 400", apiError(400, "bad"), false},
		{"Gemini 401", apiError(401, "no key"), false},
		{"Gemini 403", apiError(403, "denied"), false},
		{"Gemini 404", apiError(404, "gone"), false},
		{"Gemini 429", apiError(429, "slow"), true},
		{"Gemini 499", apiError(499, "closed"), true},
		{"Gemini 500", apiError(500, "boom"), true},
		{"Gemini 503 pointer", fmt.Errorf("x: %w", &genai.APIError{Code: 503}), true},
		{"Gemini 600", apiError(600, "?"), false},
		{"OpenAI 429", oaiAPIError(429, "", "", "slow", nil), true},
		{"OpenAI 502", oaiAPIError(502, "", "", "bad gateway", nil), true},
		{"OpenAI 400", oaiAPIError(400, "", "", "bad", nil), false},
		{"OpenAI 404", oaiAPIError(404, "", "", "gone", nil), false},
		// IsRetryable is status-only: classified errors are the caller's
		// to handle first.
		{"terminal quota from a 429", Classify(apiError(429, "limit: 0")), true},
		{"model not found", Classify(apiError(404, "gone")), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsRetryable(tt.err); got != tt.want {
				t.Errorf("IsRetryable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// newFakeGemini returns a fake Gemini server and the Gemini backend talking
// to it through the real genai client.
func newFakeGemini(t *testing.T, client *http.Client) (*fakegemini.Server, *Gemini) {
	t.Helper()
	srv := fakegemini.New(t)
	g, err := NewGemini(t.Context(), GeminiConfig{APIKey: fakegemini.DefaultAPIKey, BaseURL: srv.URL, HTTPClient: client})
	if err != nil {
		t.Fatalf("NewGemini: %v", err)
	}
	return srv, g
}

// geminiCall makes one request through g, unary or streaming, and returns
// the texts received before the error, and the error.
func geminiCall(ctx context.Context, g *Gemini, model string, stream bool) ([]string, error) {
	contents := []*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}
	if !stream {
		resp, err := g.GenerateContent(ctx, model, contents, nil)
		if err != nil {
			return nil, err
		}
		return []string{resp.Text()}, nil
	}
	var texts []string
	for resp, err := range g.GenerateContentStream(ctx, model, contents, nil) {
		if err != nil {
			return texts, err
		}
		texts = append(texts, resp.Text())
	}
	return texts, nil
}

// TestClassifyGeminiBackend drives the real genai client, through the Gemini
// backend, against the fake Gemini server, so the classification is checked
// on the errors the client really returns, unary and streaming.
func TestClassifyGeminiBackend(t *testing.T) {
	const model = "gemini-2.5-flash"
	validationHelp := map[string]any{"@type": fakegemini.TypeHelp, "links": []any{
		map[string]any{"description": "Verify your account", "url": "https://accounts.google.com/verify"},
		map[string]any{"description": "Learn more", "url": "https://support.google.com/accounts?p=al_alert"},
	}}
	tests := []struct {
		name string
		step fakegemini.Step
		want classified
		// wantChunks are the texts a stream delivers before its error.
		wantChunks []string
	}{
		{name: "rate limit per minute", step: fakegemini.RateLimitPerMinute(15 * time.Second),
			want: classified{kind: kindRetryable, delay: 15 * time.Second, retryable: true}},
		{name: "rate limit per minute, fractional delay", step: fakegemini.RateLimitPerMinute(1500 * time.Millisecond),
			want: classified{kind: kindRetryable, delay: 1500 * time.Millisecond, retryable: true}},
		{name: "rate limit per minute, delay over 5 minutes", step: fakegemini.RateLimitPerMinute(10 * time.Minute),
			want: classified{kind: kindTerminal, delay: 10 * time.Minute, retryable: true}},
		{name: "rate limit per day", step: fakegemini.RateLimitPerDay(),
			want: classified{kind: kindTerminal, message: "You have exhausted your daily quota on this model.", retryable: true}},
		{name: "unavailable", step: fakegemini.Unavailable(),
			want: classified{kind: kindRetryable, message: "The model is overloaded. Please try again later.", retryable: true}},
		{name: "model not found", step: fakegemini.NotFound(),
			want: classified{kind: kindNotFound, message: "models/" + model + " is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods."}},
		{name: "limit: 0", step: fakegemini.APIError(429, "RESOURCE_EXHAUSTED",
			"Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 0, model: gemini-2.5-pro\nPlease retry in 20s.",
			fakegemini.RetryInfo(20*time.Second)),
			want: classified{kind: kindTerminal, retryable: true}},
		{name: "resource exhausted without details", step: fakegemini.APIError(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
			want: classified{kind: kindRetryable, retryable: true}},
		{name: "capacity exhausted", step: fakegemini.APIError(503, "UNAVAILABLE", "No capacity available for model "+model+" on the server",
			fakegemini.ErrorInfo("MODEL_CAPACITY_EXHAUSTED", cloudCode, map[string]string{"model": model}), fakegemini.RetryInfo(9*time.Second)),
			want: classified{kind: kindTerminal, reason: "MODEL_CAPACITY_EXHAUSTED", delay: 9 * time.Second, capacity: true, retryable: true}},
		{name: "validation required", step: fakegemini.APIError(403, "PERMISSION_DENIED", "Verify your account to continue.",
			fakegemini.ErrorInfo("VALIDATION_REQUIRED", cloudCode, nil), validationHelp),
			want: classified{kind: kindValidation, message: "Verify your account to continue.", link: "https://accounts.google.com/verify",
				description: "Verify your account", learnMore: "https://support.google.com/accounts?p=al_alert"}},
		{name: "permission denied", step: fakegemini.APIError(403, "PERMISSION_DENIED", "Permission denied."),
			want: classified{kind: kindUnchanged}},
		{name: "invalid argument", step: fakegemini.APIError(400, "INVALID_ARGUMENT", "Invalid JSON payload received."),
			want: classified{kind: kindUnchanged}},
		{name: "internal", step: fakegemini.APIError(500, "INTERNAL", "An internal error has occurred."),
			want: classified{kind: kindUnchanged, retryable: true}},
		{name: "Code Assist rate limit", step: fakegemini.CodeAssistError(429, "RESOURCE_EXHAUSTED", "Rate limited.",
			fakegemini.ErrorInfo("RATE_LIMIT_EXCEEDED", cloudCode, nil), fakegemini.RetryInfo(1500*time.Millisecond)),
			want: classified{kind: kindRetryable, delay: 1500 * time.Millisecond, message: "Rate limited.", retryable: true}},
		{name: "Code Assist rate limit without delay", step: fakegemini.CodeAssistError(429, "RESOURCE_EXHAUSTED", "Rate limited.",
			fakegemini.ErrorInfo("RATE_LIMIT_EXCEEDED", cloudCode, nil)),
			want: classified{kind: kindTerminal, reason: "RATE_LIMIT_EXCEEDED", retryable: true}},
		{name: "Code Assist quota exhausted", step: fakegemini.CodeAssistError(429, "RESOURCE_EXHAUSTED", "You have exhausted your capacity on this model. Your quota will reset after 19h14m47s.",
			fakegemini.ErrorInfo("QUOTA_EXHAUSTED", cloudCode, map[string]string{"model": model}), fakegemini.RetryInfo(68940*time.Second)),
			want: classified{kind: kindTerminal, reason: "QUOTA_EXHAUSTED", delay: 68940 * time.Second, capacity: true, retryable: true}},
		{name: "Code Assist capacity", step: fakegemini.CodeAssistError(503, "UNAVAILABLE", "No capacity.",
			fakegemini.ErrorInfo("MODEL_CAPACITY_EXHAUSTED", cloudCode, nil)),
			want: classified{kind: kindTerminal, reason: "MODEL_CAPACITY_EXHAUSTED", capacity: true, retryable: true}},
		{name: "Code Assist validation", step: fakegemini.CodeAssistError(403, "PERMISSION_DENIED", "Validate.",
			fakegemini.ErrorInfo("VALIDATION_REQUIRED", "autopush-cloudcode-pa.googleapis.com", map[string]string{"validation_link": "https://example.com/v"})),
			want: classified{kind: kindValidation, link: "https://example.com/v"}},
		{name: "Code Assist not found", step: fakegemini.CodeAssistError(404, "NOT_FOUND", "Requested entity was not found."),
			want: classified{kind: kindNotFound, message: "Requested entity was not found."}},
		{name: "plain-text 429", step: fakegemini.Error(429, "Too many requests. Please retry in 2s."),
			want: classified{kind: kindRetryable, delay: 2 * time.Second, retryable: true}},
		{name: "empty 503", step: fakegemini.Error(503, ""),
			want: classified{kind: kindRetryable, message: "503 Service Unavailable", retryable: true}},
		{name: "mid-stream rate limit", step: fakegemini.MidStreamError([]string{"partial ", "answer"},
			fakegemini.ErrorBody(429, "RESOURCE_EXHAUSTED", "Quota exceeded.", fakegemini.RetryInfo(3*time.Second))),
			want:       classified{kind: kindRetryable, delay: 3 * time.Second, retryable: true},
			wantChunks: []string{"partial ", "answer"}},
		{name: "mid-stream capacity", step: fakegemini.MidStreamError([]string{"x"},
			fakegemini.ErrorBody(503, "UNAVAILABLE", "You have exhausted your capacity on this model.")),
			want:       classified{kind: kindTerminal, capacity: true, retryable: true},
			wantChunks: []string{"x"}},
		{name: "mid-stream internal", step: fakegemini.MidStreamError([]string{"x"}, fakegemini.ErrorBody(500, "INTERNAL", "An internal error has occurred.")),
			want:       classified{kind: kindUnchanged, retryable: true},
			wantChunks: []string{"x"}},
		{name: "cut mid-stream", step: fakegemini.MidStreamCut("partial ", "answer"),
			want:       classified{kind: kindUnchanged, retryable: true},
			wantChunks: []string{"partial ", "answer"}},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tt.name, stream), func(t *testing.T) {
				srv, g := newFakeGemini(t, nil)
				srv.Enqueue(tt.step)
				texts, err := geminiCall(t.Context(), g, model, stream)
				if err == nil {
					t.Fatalf("no error; got %q", texts)
				}
				t.Logf("error: %v (%T)", err, err)
				checkClassified(t, err, Classify(err), tt.want)
				if stream && strings.Join(texts, "|") != strings.Join(tt.wantChunks, "|") {
					t.Errorf("chunks before the error = %q, want %q", texts, tt.wantChunks)
				}
				// The client does not retry by itself: the dispatcher owns that.
				if n := len(srv.Requests()); n != 1 {
					t.Errorf("server saw %d requests, want 1", n)
				}
			})
		}
	}
}

// TestIsRetryableGeminiTransport checks IsRetryable on the transport errors
// the genai client really returns.
func TestIsRetryableGeminiTransport(t *testing.T) {
	t.Run("connection refused", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		g, err := NewGemini(t.Context(), GeminiConfig{APIKey: "k", BaseURL: "http://" + addr})
		if err != nil {
			t.Fatal(err)
		}
		for _, stream := range []bool{false, true} {
			_, err := geminiCall(t.Context(), g, "m", stream)
			t.Logf("error: %v", err)
			if !errors.Is(err, syscall.ECONNREFUSED) || !IsRetryable(err) || Classify(err) != err {
				t.Errorf("stream=%v: error %v: want ECONNREFUSED, retryable, unclassified", stream, err)
			}
		}
	})
	t.Run("TLS to a plain HTTP server", func(t *testing.T) {
		srv := fakegemini.New(t)
		g, err := NewGemini(t.Context(), GeminiConfig{APIKey: "k", BaseURL: strings.Replace(srv.URL, "http://", "https://", 1)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = geminiCall(t.Context(), g, "m", false)
		t.Logf("error: %v", err)
		if err == nil || !IsRetryable(err) {
			t.Errorf("error %v: want retryable (ERR_SSL_WRONG_VERSION_NUMBER)", err)
		}
	})
	t.Run("connection dropped before a reply", func(t *testing.T) {
		srv, g := newFakeGemini(t, nil)
		srv.Enqueue(fakegemini.MidStreamCut("x"))
		_, err := geminiCall(t.Context(), g, "m", false)
		t.Logf("error: %v", err)
		if err == nil || !IsRetryable(err) {
			t.Errorf("error %v: want retryable", err)
		}
	})
	t.Run("client timeout", func(t *testing.T) {
		// The client's own timeout, like undici's, is retryable although
		// net/http makes it match context.DeadlineExceeded.
		srv, g := newFakeGemini(t, &http.Client{Timeout: 50 * time.Millisecond})
		srv.Enqueue(fakegemini.Hang())
		_, err := geminiCall(t.Context(), g, "m", false)
		t.Logf("error: %v", err)
		if !errors.Is(err, context.DeadlineExceeded) || !IsRetryable(err) {
			t.Errorf("error %v: want a retryable client timeout", err)
		}
	})
	t.Run("caller deadline", func(t *testing.T) {
		_, g := newFakeGemini(t, nil)
		ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
		defer cancel()
		for _, stream := range []bool{false, true} {
			_, err := geminiCall(ctx, g, "m", stream)
			t.Logf("error: %v", err)
			if !errors.Is(err, context.DeadlineExceeded) || IsRetryable(err) {
				t.Errorf("stream=%v: error %v: want a non-retryable deadline", stream, err)
			}
		}
	})
	t.Run("caller cancels mid-stream", func(t *testing.T) {
		srv, g := newFakeGemini(t, nil)
		srv.Enqueue(fakegemini.Hang("first"))
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var (
			chunks int
			err    error
		)
		for _, e := range g.GenerateContentStream(ctx, "m", []*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}, nil) {
			if e != nil {
				err = e
				break
			}
			chunks++
			cancel()
		}
		t.Logf("error: %v", err)
		if chunks != 1 || !errors.Is(err, context.Canceled) || IsRetryable(err) {
			t.Errorf("%d chunks, error %v: want 1 chunk and a non-retryable cancellation", chunks, err)
		}
	})
}

// TestClassifyOpenAIBackend drives the OpenAI backend against a local server
// answering with errors, checking that the SDK does not retry by itself and
// that Classify sees the response's headers.
func TestClassifyOpenAIBackend(t *testing.T) {
	tests := []struct {
		name   string
		status int
		header map[string]string
		body   string
		want   classified
	}{
		{"429 with Retry-After", 429, map[string]string{"Retry-After": "7"},
			`{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}`,
			classified{kind: kindRetryable, delay: 7 * time.Second, message: "Rate limit reached for requests", retryable: true}},
		{"429 with retry-after-ms", 429, map[string]string{"retry-after-ms": "1200", "Retry-After": "2"},
			`{"error":{"message":"slow down","type":"requests"}}`,
			classified{kind: kindRetryable, delay: 1200 * time.Millisecond, retryable: true}},
		{"429 with a long Retry-After", 429, map[string]string{"Retry-After": "3600"},
			`{"error":{"message":"slow down"}}`,
			classified{kind: kindTerminal, delay: time.Hour, retryable: true}},
		{"429 insufficient_quota", 429, nil,
			`{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
			classified{kind: kindTerminal, reason: "insufficient_quota", message: "You exceeded your current quota, please check your plan and billing details.", retryable: true}},
		{"404", 404, nil,
			`{"error":{"message":"The model 'm' does not exist","type":"invalid_request_error","code":"model_not_found"}}`,
			classified{kind: kindNotFound, message: "The model 'm' does not exist"}},
		{"404 from vLLM", 404, nil,
			`{"object":"error","message":"The model m does not exist.","type":"NotFoundError","code":404}`,
			classified{kind: kindNotFound}},
		{"503", 503, map[string]string{"Retry-After": "1"},
			`{"error":{"message":"The server is overloaded","type":"server_error"}}`,
			classified{kind: kindUnchanged, retryable: true}},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tt.name, stream), func(t *testing.T) {
				b, f := newOAIFake(t, func(w http.ResponseWriter, r *http.Request) {
					for k, v := range tt.header {
						w.Header().Set(k, v)
					}
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(tt.status)
					fmt.Fprint(w, tt.body)
				})
				var err error
				if stream {
					_, err = oaiCollect(t, b.GenerateContentStream(t.Context(), "m", oaiUserText("q"), nil))
				} else {
					_, err = b.GenerateContent(t.Context(), "m", oaiUserText("q"), nil)
				}
				if err == nil {
					t.Fatal("no error")
				}
				t.Logf("error: %v", err)
				checkClassified(t, err, Classify(err), tt.want)
				if n := len(f.requests()); n != 1 {
					t.Errorf("server saw %d requests, want 1 (no SDK retries)", n)
				}
			})
		}
	}
}
