package llm

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/runtime/llm/chatapi"
)

// This file is gemini-cli's error classification (classifyGoogleError in
// googleQuotaErrors.ts, parseGoogleApiError in googleErrors.ts and
// isRetryableError in retry.ts), so that agentry's dispatcher retries, gives
// up and falls back to another model exactly when gemini-cli would. The
// OpenAI-compatible backend gets the same four outcomes from its own error
// shape.

// MaxRetryDelay is the longest server-requested delay still worth waiting for
// (gemini-cli: 300 s). A quota error asking for a longer wait is terminal: the
// user is effectively locked out of the model, so the dispatcher should fall
// back or report rather than sit silent for minutes.
const MaxRetryDelay = 300 * time.Second

// TerminalQuotaError reports a quota or capacity error for which retrying the
// same model is pointless: a daily quota, exhausted model capacity, a quota
// limit of 0, a server delay over MaxRetryDelay, Code Assist's
// QUOTA_EXHAUSTED, insufficient credits, or OpenAI's insufficient_quota. The
// dispatcher's answer is model fallback or an error for the user, not backoff.
type TerminalQuotaError struct {
	// Message is human readable, from the API.
	Message string
	// Reason is the ErrorInfo reason when known, e.g.
	// "MODEL_CAPACITY_EXHAUSTED", "QUOTA_EXHAUSTED",
	// "INSUFFICIENT_G1_CREDITS_BALANCE", or "insufficient_quota" from an
	// OpenAI-compatible server; "" otherwise.
	Reason string
	// RetryDelay is the server-suggested delay; 0 means none was given.
	RetryDelay time.Duration
	// Err is the backend's error.
	Err error
}

// Error returns the API's message, which is what the user should see.
func (e *TerminalQuotaError) Error() string { return messageOr(e.Message, e.Err, "quota exhausted") }

// Unwrap returns the backend's error, so HTTPStatus and errors.As still
// reach it.
func (e *TerminalQuotaError) Unwrap() error { return e.Err }

// IsCapacity reports whether the error is about the model's serving capacity
// rather than the user's quota. gemini-cli retries capacity errors a couple of
// times before falling back, since capacity comes back on its own.
func (e *TerminalQuotaError) IsCapacity() bool {
	return e.Reason == "MODEL_CAPACITY_EXHAUSTED" || e.Reason == "MODEL_CAPACITY_EXCEEDED" || capacityPhrase().MatchString(e.Message)
}

// IsInsufficientCredits reports whether the account ran out of Google One AI
// credits, which only buying credits (not waiting or another model) fixes.
func (e *TerminalQuotaError) IsInsufficientCredits() bool {
	return e.Reason == "INSUFFICIENT_G1_CREDITS_BALANCE"
}

// RetryableQuotaError reports a rate limit (or an overloaded model) that is
// worth retrying after a delay.
type RetryableQuotaError struct {
	// Message is human readable, from the API.
	Message string
	// RetryDelay is the server's delay; 0 means none was given and the
	// dispatcher's own backoff applies.
	RetryDelay time.Duration
	// Err is the backend's error.
	Err error
}

// Error returns the API's message.
func (e *RetryableQuotaError) Error() string { return messageOr(e.Message, e.Err, "rate limited") }

// Unwrap returns the backend's error.
func (e *RetryableQuotaError) Unwrap() error { return e.Err }

// ModelNotFoundError reports a 404: the model does not exist or does not
// serve this method. Retrying cannot help; another model might.
type ModelNotFoundError struct {
	// Message is human readable, from the API; "Model not found" when the
	// API gave none.
	Message string
	// Err is the backend's error.
	Err error
}

// Error returns the API's message.
func (e *ModelNotFoundError) Error() string { return messageOr(e.Message, e.Err, "Model not found") }

// Unwrap returns the backend's error.
func (e *ModelNotFoundError) Unwrap() error { return e.Err }

// ValidationRequiredError reports a Code Assist 403 asking the user to verify
// their account in a browser before the model may be used again. Only the
// user can resolve it, so it is neither retried nor a reason to fall back.
type ValidationRequiredError struct {
	// Message is human readable, from the API.
	Message string
	// Link is the URL where the user completes validation: the first Help
	// link, else the ErrorInfo's validation_link metadata; "" if neither.
	Link string
	// Description is the first Help link's description, if any.
	Description string
	// LearnMoreURL is the Help link described as "Learn more" or pointing
	// at support.google.com, if any.
	LearnMoreURL string
	// Err is the backend's error.
	Err error
}

// Error returns the API's message.
func (e *ValidationRequiredError) Error() string {
	return messageOr(e.Message, e.Err, "account validation required")
}

// Unwrap returns the backend's error.
func (e *ValidationRequiredError) Unwrap() error { return e.Err }

// messageOr returns msg, else err's text, else fallback, so that a
// classified error never prints as an empty string.
func messageOr(msg string, err error, fallback string) string {
	switch {
	case msg != "":
		return msg
	case err != nil:
		return err.Error()
	}
	return fallback
}

// Classify returns err classified into a *TerminalQuotaError,
// *RetryableQuotaError, *ModelNotFoundError or *ValidationRequiredError that
// wraps err (so errors.Is, errors.As and HTTPStatus still see the original),
// or err unchanged when none applies. An error already classified (anywhere
// in its chain) is returned as is; nil gives nil.
//
// Gemini errors (genai.APIError, value or pointer, possibly wrapped, and JSON
// error bodies inside error messages) follow gemini-cli's classifyGoogleError
// rule for rule. Errors of OpenAI-compatible servers (*chatapi.Error) get the
// same outcomes from their own shape: 404 is ModelNotFound, a 429 with error
// code or type "insufficient_quota" is terminal, any other 429 is retryable
// after its Retry-After (terminal beyond MaxRetryDelay), and the rest is
// left unchanged.
//
// Errors left unchanged may still be retryable: see IsRetryable.
func Classify(err error) error {
	if err == nil || isClassified(err) {
		return err
	}
	var oe *chatapi.Error
	if errors.As(err, &oe) && oe != nil {
		return classifyOpenAI(err, oe)
	}
	return classifyGoogle(err)
}

// isClassified reports whether err already carries a classification.
func isClassified(err error) bool {
	var (
		tq *TerminalQuotaError
		rq *RetryableQuotaError
		nf *ModelNotFoundError
		vr *ValidationRequiredError
	)
	return errors.As(err, &tq) || errors.As(err, &rq) || errors.As(err, &nf) || errors.As(err, &vr)
}

// Type URLs of the google.rpc error details the classification reads.
const (
	typeErrorInfo    = "type.googleapis.com/google.rpc.ErrorInfo"
	typeHelp         = "type.googleapis.com/google.rpc.Help"
	typeQuotaFailure = "type.googleapis.com/google.rpc.QuotaFailure"
	typeRetryInfo    = "type.googleapis.com/google.rpc.RetryInfo"
)

// cloudCodeDomain reports the ErrorInfo domains of the Code Assist API,
// whose reasons (VALIDATION_REQUIRED, RATE_LIMIT_EXCEEDED, QUOTA_EXHAUSTED)
// are only trusted from there.
func cloudCodeDomain(domain string) bool {
	switch domain {
	case "cloudcode-pa.googleapis.com", "staging-cloudcode-pa.googleapis.com", "autopush-cloudcode-pa.googleapis.com":
		return true
	}
	return false
}

// jsSpace is JavaScript's \s, which gemini-cli's patterns use; Go's \s is
// ASCII only.
const jsSpace = `[\t\n\v\f\r \x{00a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}]`

// The patterns are compiled on first use: most runs never see an error
// to classify.
var (
	// capacityPhrase marks a message about exhausted model capacity.
	capacityPhrase = lazyRegexp(`(?i)exhausted your capacity|capacity exceeded|MODEL_CAPACITY_EXHAUSTED`)
	// limitZero finds "limit: 0"; limitIsZero rejects matches followed by
	// more digits, which gemini-cli's (?!\d|\.\d) lookahead does and RE2
	// cannot.
	limitZero = lazyRegexp(`limit:` + jsSpace + `*0`)
	// retryIn is the API's "Please retry in 12.3s." hint, the only delay an
	// error without structured details carries.
	retryIn = lazyRegexp(`Please retry in ([0-9.]+(?:ms|s))`)
	// doubleComma matches the stray commas SSE parsing injects into error
	// JSON (",\n ,"), which would make the body unparsable.
	doubleComma = lazyRegexp(`,(\s*),`)
	// jsFloatPrefix is the prefix of a string that JavaScript's parseFloat
	// reads; the rest is ignored.
	jsFloatPrefix = lazyRegexp(`^[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)`)
)

// lazyRegexp returns a function that compiles expr on its first call and
// returns the same *regexp.Regexp on every call.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// limitIsZero reports whether the lowercased message says a quota's limit
// is 0 (not 0.5, not 05): the quota does not exist for this account, so
// waiting never helps.
func limitIsZero(lower string) bool {
	for _, m := range limitZero().FindAllStringIndex(lower, -1) {
		rest := lower[m[1]:]
		if rest != "" && isDigit(rest[0]) {
			continue
		}
		if len(rest) > 1 && rest[0] == '.' && isDigit(rest[1]) {
			continue
		}
		return true
	}
	return false
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// googleError is gemini-cli's GoogleApiError: the innermost error object
// found in an error, {code, message, details}.
type googleError struct {
	// code is the error's numeric code; 0 when the object's code is not a
	// number (gemini-cli then matches no status rule either).
	code    int
	message string
	// details are the entries that have a string "@type".
	details []map[string]any
}

// detail returns the first detail of type typ, or nil.
func (g *googleError) detail(typ string) map[string]any {
	for _, d := range g.details {
		if d["@type"] == typ {
			return d
		}
	}
	return nil
}

// maxErrorNesting bounds how many error bodies nested in the messages of
// the outermost one are unwrapped, as gemini-cli does.
const maxErrorNesting = 10

// parseGoogleError finds the structured Google API error in err, like
// gemini-cli's parseGoogleApiError: the outermost error body is a
// genai.APIError in the chain, or JSON in the error's text (an array giving
// its first element, as Code Assist sends [{"error":{...}}], which the genai
// client leaves undecoded in Message); then error messages that are
// themselves JSON error bodies are unwrapped, up to 10 levels. It returns
// nil when the innermost object lacks a code or a message.
func parseGoogleError(err error) *googleError {
	var (
		cur map[string]any
		// inText: the outermost body is in cur's message, not cur.
		inText bool
		// descended: cur came out of a message.
		descended bool
	)
	if ge, ok := genaiAPIError(err); ok {
		cur = map[string]any{"code": float64(ge.Code), "message": ge.Message, "details": jsonDetails(ge.Details)}
	} else {
		cur, inText = map[string]any{"message": err.Error()}, true
	}
	for depth := 0; depth < maxErrorNesting; depth++ {
		msg, ok := cur["message"].(string)
		if !ok {
			break
		}
		inner, array, ok := nestedError(msg)
		if !ok {
			break
		}
		// Finding the outermost body (in an error's text, or in the array
		// the genai client could not decode) does not count as nesting.
		if !descended && (inText || array) {
			depth--
		}
		descended = true
		m, ok := inner.(map[string]any)
		if !ok {
			// {"error": "text"}: no error object to read.
			return nil
		}
		cur = m
	}

	g := &googleError{}
	switch c := cur["code"].(type) {
	case float64:
		if c == 0 {
			return nil
		}
		if c == math.Trunc(c) && math.Abs(c) < 1e9 {
			g.code = int(c)
		}
	case string:
		// A truthy code that is not a number; see googleError.code.
		if c == "" {
			return nil
		}
	default:
		return nil
	}
	g.message, _ = cur["message"].(string)
	if g.message == "" {
		return nil
	}
	details, _ := cur["details"].([]any)
	for _, d := range details {
		if m, ok := d.(map[string]any); ok {
			if m = normalizeDetail(m); m != nil {
				g.details = append(g.details, m)
			}
		}
	}
	return g
}

// jsonDetails returns details in the shape JSON decoding gives (objects as
// map[string]any, arrays as []any), whatever maps and slices a caller built
// them from, and as a copy that classification cannot disturb.
func jsonDetails(details []map[string]any) []any {
	out := make([]any, len(details))
	for i, d := range details {
		b, err := json.Marshal(d)
		var v any
		if err != nil || json.Unmarshal(b, &v) != nil {
			// Unencodable: read a shallow copy as far as it goes.
			v = maps.Clone(d)
		}
		out[i] = v
	}
	return out
}

// nestedError parses msg as a JSON error body and returns its "error" value.
// Like gemini-cli it removes non-breaking spaces, turns newlines into spaces
// and collapses doubled commas first, falls back to the text between the
// first "{" and the last "}" (for messages such as "[API Error: {...}]"),
// and takes the first element of an array.
func nestedError(msg string) (inner any, array, ok bool) {
	if !strings.ContainsAny(msg, "{[") {
		return nil, false, false
	}
	msg = strings.ReplaceAll(msg, "\u00a0", "")
	msg = strings.ReplaceAll(msg, "\n", " ")
	v, ok := parseJSON(msg)
	if !ok {
		first, last := strings.IndexByte(msg, '{'), strings.LastIndexByte(msg, '}')
		if first < 0 || last <= first {
			return nil, false, false
		}
		if v, ok = parseJSON(msg[first : last+1]); !ok {
			return nil, false, false
		}
	}
	if a, isArray := v.([]any); isArray && len(a) > 0 {
		v, array = a[0], true
	}
	obj, isObject := v.(map[string]any)
	if !isObject {
		return nil, false, false
	}
	inner, present := obj["error"]
	if !present || !jsTruthy(inner) {
		return nil, false, false
	}
	return inner, array, true
}

// parseJSON decodes s after collapsing the doubled commas of corrupted SSE
// payloads.
func parseJSON(s string) (any, bool) {
	for {
		next := doubleComma().ReplaceAllString(s, ",$1")
		if next == s {
			break
		}
		s = next
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, false
	}
	return v, true
}

// jsTruthy reports whether a decoded JSON value is truthy in JavaScript,
// which decides whether gemini-cli treats an "error" field as present.
func jsTruthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case float64:
		return v != 0
	case string:
		return v != ""
	}
	return true
}

// normalizeDetail returns d with its "@type" key, tolerating the stray
// whitespace SSE parsing leaves around keys, or nil when d has no string
// "@type". d is the classifier's own decoded copy, so it is renamed in place.
func normalizeDetail(d map[string]any) map[string]any {
	if _, ok := d["@type"]; !ok {
		for k, t := range d {
			if strings.TrimSpace(k) == "@type" {
				delete(d, k)
				d["@type"] = t
				break
			}
		}
	}
	if _, ok := d["@type"].(string); !ok {
		return nil
	}
	return d
}

// genaiAPIError returns the genai.APIError in err's chain; the client returns
// it as a value, but a pointer is accepted too.
func genaiAPIError(err error) (genai.APIError, bool) {
	var ge genai.APIError
	if errors.As(err, &ge) {
		return ge, true
	}
	var gp *genai.APIError
	if errors.As(err, &gp) && gp != nil {
		return *gp, true
	}
	return genai.APIError{}, false
}

// classifyGoogle is gemini-cli's classifyGoogleError.
func classifyGoogle(err error) error {
	g := parseGoogleError(err)
	var (
		status int
		msg    string
	)
	if g != nil {
		status, msg = g.code, g.message
	} else {
		status, _ = HTTPStatus(err)
		if ge, ok := genaiAPIError(err); ok {
			msg = ge.Message
			if msg == "" {
				msg = ge.Status
			}
		} else {
			msg = err.Error()
		}
	}

	if status == http.StatusNotFound {
		m := strings.TrimSpace(msg)
		if m == "" {
			m = "Model not found"
		}
		return &ModelNotFoundError{Message: m, Err: err}
	}
	if status == http.StatusForbidden && g != nil {
		if v := validationRequired(g, err); v != nil {
			return v
		}
	}
	if quotaStatus(status) && limitIsZero(strings.ToLower(msg)) {
		return &TerminalQuotaError{Message: msg, Err: err}
	}

	if g == nil || !quotaStatus(g.code) || len(g.details) == 0 {
		// No structured details: all there is to go on is the text and
		// the status.
		if m := retryIn().FindStringSubmatch(msg); m != nil {
			sec, ok := parseDurationSeconds(m[1])
			if !ok {
				return err
			}
			if sec > MaxRetryDelay.Seconds() {
				return &TerminalQuotaError{Message: msg, RetryDelay: secondsToDuration(sec), Err: err}
			}
			return &RetryableQuotaError{Message: msg, RetryDelay: secondsToDuration(sec), Err: err}
		}
		if quotaStatus(status) {
			if capacityPhrase().MatchString(msg) {
				return &TerminalQuotaError{Message: msg, Err: err}
			}
			// Assume a temporary rate limit.
			return &RetryableQuotaError{Message: msg, Err: err}
		}
		return err
	}

	quotaFailure := g.detail(typeQuotaFailure)
	errorInfo := g.detail(typeErrorInfo)
	retryInfo := g.detail(typeRetryInfo)

	// Long-term limits first: a daily quota stays exhausted however long
	// RetryInfo says to wait.
	for _, v := range violations(quotaFailure) {
		if id := str(v, "quotaId"); strings.Contains(id, "PerDay") || strings.Contains(id, "Daily") {
			return &TerminalQuotaError{Message: "You have exhausted your daily quota on this model.", Err: err}
		}
	}

	// delay is set only for a non-zero parsable RetryInfo delay, as
	// gemini-cli's truthiness test does.
	var (
		delay    float64
		hasDelay bool
	)
	rawDelay := str(retryInfo, "retryDelay")
	if rawDelay != "" {
		if sec, ok := parseDurationSeconds(rawDelay); ok && sec != 0 {
			delay, hasDelay = sec, true
		}
	}
	var delayDur time.Duration
	if hasDelay {
		delayDur = secondsToDuration(delay)
	}

	if errorInfo != nil {
		reason := str(errorInfo, "reason")
		switch reason {
		case "MODEL_CAPACITY_EXHAUSTED", "MODEL_CAPACITY_EXCEEDED", "INSUFFICIENT_G1_CREDITS_BALANCE":
			// Terminal whatever the domain, so that fallback happens at once.
			return &TerminalQuotaError{Message: g.message, Reason: reason, RetryDelay: delayDur, Err: err}
		}
		if isCloudCodeDomain(str(errorInfo, "domain")) {
			switch reason {
			case "RATE_LIMIT_EXCEEDED":
				if !hasDelay || delay > MaxRetryDelay.Seconds() {
					return &TerminalQuotaError{Message: g.message, Reason: reason, RetryDelay: delayDur, Err: err}
				}
				return &RetryableQuotaError{Message: g.message, RetryDelay: delayDur, Err: err}
			case "QUOTA_EXHAUSTED":
				return &TerminalQuotaError{Message: g.message, Reason: reason, RetryDelay: delayDur, Err: err}
			}
		}
	}

	if hasDelay {
		m := g.message + "\nSuggested retry after " + rawDelay + "."
		if delay > MaxRetryDelay.Seconds() {
			return &TerminalQuotaError{Message: m, RetryDelay: delayDur, Err: err}
		}
		return &RetryableQuotaError{Message: m, RetryDelay: delayDur, Err: err}
	}

	// Short-term limits reset within the minute.
	for _, v := range violations(quotaFailure) {
		if strings.Contains(str(v, "quotaId"), "PerMinute") {
			return &RetryableQuotaError{Message: g.message + "\nSuggested retry after 60s.", RetryDelay: time.Minute, Err: err}
		}
	}
	if errorInfo != nil {
		meta, _ := errorInfo["metadata"].(map[string]any)
		if strings.Contains(str(meta, "quota_limit"), "PerMinute") {
			return &RetryableQuotaError{Message: str(errorInfo, "reason") + "\nSuggested retry after 60s.", RetryDelay: time.Minute, Err: err}
		}
	}

	if capacityPhrase().MatchString(msg) {
		return &TerminalQuotaError{Message: msg, Err: err}
	}
	// A 429, 499 or 503 with details none of the rules recognise.
	return &RetryableQuotaError{Message: msg, Err: err}
}

// quotaStatus reports the statuses gemini-cli treats as quota or capacity
// errors: 429, 499 (client closed request, which the API also uses for
// overload) and 503.
func quotaStatus(code int) bool {
	return code == http.StatusTooManyRequests || code == 499 || code == http.StatusServiceUnavailable
}

// validationRequired returns the ValidationRequiredError for a Code Assist
// VALIDATION_REQUIRED ErrorInfo in g, or nil.
func validationRequired(g *googleError, err error) *ValidationRequiredError {
	info := g.detail(typeErrorInfo)
	if info == nil || str(info, "reason") != "VALIDATION_REQUIRED" || !isCloudCodeDomain(str(info, "domain")) {
		return nil
	}
	v := &ValidationRequiredError{Message: g.message, Err: err}
	if help := g.detail(typeHelp); help != nil {
		links, _ := help["links"].([]any)
		if len(links) > 0 {
			first, _ := links[0].(map[string]any)
			v.Link, v.Description = str(first, "url"), str(first, "description")
			for _, l := range links {
				link, _ := l.(map[string]any)
				if isLearnMore(str(link, "description"), str(link, "url")) {
					v.LearnMoreURL = str(link, "url")
					break
				}
			}
		}
	}
	if v.Link == "" {
		meta, _ := info["metadata"].(map[string]any)
		v.Link = str(meta, "validation_link")
	}
	return v
}

// isLearnMore reports whether a Help link is the "Learn more" one: described
// so, or pointing at support.google.com.
func isLearnMore(description, rawURL string) bool {
	if strings.ToLower(strings.TrimSpace(description)) == "learn more" {
		return true
	}
	u, err := url.Parse(rawURL)
	return err == nil && u.Scheme != "" && strings.EqualFold(u.Hostname(), "support.google.com")
}

// isCloudCodeDomain reports whether an ErrorInfo domain is a Code Assist
// one, ignoring the stray characters SSE parsing can leave in it (such as a
// trailing comma).
func isCloudCodeDomain(domain string) bool {
	clean := strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return -1
	}, domain)
	return cloudCodeDomain(clean)
}

// violations returns the violations of a QuotaFailure detail.
func violations(quotaFailure map[string]any) []map[string]any {
	list, _ := quotaFailure["violations"].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, v := range list {
		if m, ok := v.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// str returns m[key] when it is a string.
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// parseDurationSeconds parses a delay such as "34.074824224s", "60s" or
// "900ms" into seconds, reading the number as JavaScript's parseFloat does
// (so "1.5.2s" is 1.5), which is what gemini-cli's delays are made of.
func parseDurationSeconds(d string) (float64, bool) {
	switch {
	case strings.HasSuffix(d, "ms"):
		ms, ok := parseJSFloat(strings.TrimSuffix(d, "ms"))
		return ms / 1000, ok
	case strings.HasSuffix(d, "s"):
		return parseJSFloat(strings.TrimSuffix(d, "s"))
	}
	return 0, false
}

// parseJSFloat is JavaScript's parseFloat: the longest numeric prefix after
// leading white space; false where parseFloat gives NaN.
func parseJSFloat(s string) (float64, bool) {
	m := jsFloatPrefix().FindString(strings.TrimLeftFunc(s, unicode.IsSpace))
	if m == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(m, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

// secondsToDuration converts a server delay to a Duration, clamped to
// [0, the longest Duration]: a negative delay means no wait, a huge one is
// far beyond MaxRetryDelay either way.
func secondsToDuration(sec float64) time.Duration {
	switch ns := math.Round(sec * 1e9); {
	case math.IsNaN(ns) || ns <= 0:
		return 0
	case ns >= math.MaxInt64:
		return math.MaxInt64
	default:
		return time.Duration(ns)
	}
}

// classifyOpenAI classifies an OpenAI-compatible server's error: 404 is
// ModelNotFound; a 429 whose error code or type is "insufficient_quota" (no
// credit left, which waiting does not fix) is terminal; any other 429 is a
// retryable rate limit whose delay comes from the Retry-After-Ms or
// Retry-After header, terminal beyond MaxRetryDelay. Unlike gemini-cli, which
// ignores Retry-After, the header is honoured: it is how OpenAI-compatible
// servers say how long to wait. Other statuses (5xx included) are left to
// IsRetryable.
func classifyOpenAI(err error, oe *chatapi.Error) error {
	msg := oe.Message
	if msg == "" {
		// Servers that do not answer in OpenAI's shape: the wrapped error
		// carries the start of the body.
		msg = err.Error()
	}
	switch oe.StatusCode {
	case http.StatusNotFound:
		return &ModelNotFoundError{Message: msg, Err: err}
	case http.StatusTooManyRequests:
		if oe.Code == "insufficient_quota" || oe.Type == "insufficient_quota" {
			return &TerminalQuotaError{Message: msg, Reason: "insufficient_quota", Err: err}
		}
		delay := retryAfter(oe.Header, time.Now())
		if delay > MaxRetryDelay {
			return &TerminalQuotaError{Message: msg, RetryDelay: delay, Err: err}
		}
		return &RetryableQuotaError{Message: msg, RetryDelay: delay, Err: err}
	}
	return err
}

// retryAfter returns the delay a response asks for: Retry-After-Ms in
// milliseconds (OpenAI's more precise header) or else Retry-After in seconds
// or as an HTTP date, relative to now. It returns 0 when neither is present
// or parsable, or the date has passed.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(ms, 0) {
			return secondsToDuration(ms / 1000)
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if sec, err := strconv.ParseFloat(v, 64); err == nil {
		if math.IsInf(sec, 0) {
			return 0
		}
		return secondsToDuration(sec)
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// IsRetryable reports whether err is transient, as gemini-cli's
// isRetryableError decides: a network failure anywhere in the Unwrap chain,
// or HTTP status 429, 499 or 5xx (never 400 and other 4xx).
//
// The network failures are the Go forms of the Node error codes gemini-cli
// retries: connection reset (ECONNRESET, also a server closing the connection
// before answering), refused (ECONNREFUSED), broken pipe (EPIPE), timed out
// (ETIMEDOUT, and any net.Error timeout such as http.Client.Timeout or a TLS
// handshake timeout: undici's header, body and connect timeouts), DNS
// failures (ENOTFOUND, EAI_AGAIN), TLS record errors (a non-TLS peer:
// ERR_SSL_WRONG_VERSION_NUMBER; bad record MAC; EPROTO) and a body cut off
// mid-stream (io.ErrUnexpectedEOF: ERR_STREAM_PREMATURE_CLOSE).
//
// The caller's own context.Canceled or context.DeadlineExceeded is never
// retryable: the caller gave up (gemini-cli's AbortError). A cancellation
// with a custom cause cannot be recognised from the error alone, so callers
// should check their context first.
//
// IsRetryable looks at transport and status only. It reports true for a
// TerminalQuotaError from a 429, which gemini-cli never asks it about:
// callers handle the classified errors of Classify first.
func IsRetryable(err error) bool {
	if err == nil || anyInChain(err, isCallerStop) {
		return false
	}
	if anyInChain(err, isNetworkFailure) {
		return true
	}
	status, ok := HTTPStatus(err)
	if !ok {
		return false
	}
	return status == http.StatusTooManyRequests || status == 499 || (status >= 500 && status < 600)
}

// maxChainNodes bounds the walk of an error tree, against a pathological or
// cyclic Unwrap.
const maxChainNodes = 100

// anyInChain reports whether match holds for err or any error it wraps,
// following both Unwrap() error and Unwrap() []error.
func anyInChain(err error, match func(error) bool) bool {
	queue := []error{err}
	for n := 0; len(queue) > 0 && n < maxChainNodes; n++ {
		e := queue[0]
		queue = queue[1:]
		if e == nil {
			continue
		}
		if match(e) {
			return true
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			queue = append(queue, u.Unwrap())
		case interface{ Unwrap() []error }:
			queue = append(queue, u.Unwrap()...)
		}
	}
	return false
}

// isCallerStop reports the context errors themselves. It compares identity
// rather than using errors.Is because net/http's own timeouts (which are
// retryable) claim to be context.DeadlineExceeded through an Is method.
func isCallerStop(e error) bool {
	return e == context.Canceled || e == context.DeadlineExceeded
}

// errHTTPToHTTPS is the text of net/http's error for a plain HTTP answer to
// a TLS client, which Node reports as ERR_SSL_WRONG_VERSION_NUMBER; net/http
// creates it with errors.New, so only the text identifies it.
const errHTTPToHTTPS = "http: server gave HTTP response to HTTPS client"

// isNetworkFailure reports whether one error of a chain is a transient
// network failure; see IsRetryable.
func isNetworkFailure(e error) bool {
	switch e := e.(type) {
	case syscall.Errno:
		switch e {
		case syscall.ECONNRESET, syscall.ETIMEDOUT, syscall.EPIPE, syscall.ECONNREFUSED, syscall.EPROTO:
			return true
		}
	case *net.DNSError:
		// Not found (ENOTFOUND), temporary (EAI_AGAIN) or a failing resolver.
		return true
	case tls.RecordHeaderError:
		return true
	case tls.AlertError:
		return e == tlsAlertBadRecordMAC
	case *net.OpError:
		// crypto/tls reports alerts as unexported values inside these.
		if (e.Op == "local error" || e.Op == "remote error") && e.Err != nil && e.Err.Error() == tlsAlertBadRecordMAC.Error() {
			return true
		}
	case *url.Error:
		// The server closed the connection before any response: Node's
		// "socket hang up", ECONNRESET.
		if e.Err == io.EOF || (e.Err != nil && e.Err.Error() == errHTTPToHTTPS) {
			return true
		}
	}
	if e == io.ErrUnexpectedEOF {
		return true
	}
	if t, ok := e.(interface{ Timeout() bool }); ok && t.Timeout() {
		return true
	}
	return false
}

// tlsAlertBadRecordMAC is TLS alert 20, bad_record_mac.
const tlsAlertBadRecordMAC = tls.AlertError(20)
