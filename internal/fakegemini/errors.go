package fakegemini

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Type URLs of the google.rpc error details the Gemini API sends.
const (
	// TypeQuotaFailure is the @type of a QuotaFailure detail.
	TypeQuotaFailure = "type.googleapis.com/google.rpc.QuotaFailure"
	// TypeRetryInfo is the @type of a RetryInfo detail.
	TypeRetryInfo = "type.googleapis.com/google.rpc.RetryInfo"
	// TypeErrorInfo is the @type of an ErrorInfo detail.
	TypeErrorInfo = "type.googleapis.com/google.rpc.ErrorInfo"
	// TypeHelp is the @type of a Help detail.
	TypeHelp = "type.googleapis.com/google.rpc.Help"
)

// ErrorBody returns the JSON body of a Google API error,
// {"error":{"code":…,"message":…,"status":…,"details":[…]}}.
func ErrorBody(code int, status, message string, details ...map[string]any) string {
	e := map[string]any{"code": code, "message": message, "status": status}
	if len(details) > 0 {
		e["details"] = details
	}
	b, err := json.Marshal(map[string]any{"error": e})
	if err != nil {
		// Only a detail holding an unencodable value gets here; the test
		// author should see it rather than a silently different body.
		panic(fmt.Sprintf("fakegemini: encode error body: %v", err))
	}
	return string(b)
}

// QuotaViolation is one violation of a [QuotaFailure] detail.
type QuotaViolation struct {
	// Metric is the quota metric, e.g.
	// "generativelanguage.googleapis.com/generate_content_free_tier_requests".
	Metric string
	// ID is the quota id; its "PerMinute" or "PerDay" part is what tells a
	// retryable limit from an exhausted daily quota.
	ID string
	// Model fills the model quota dimension when set.
	Model string
	// Value is the quota limit, e.g. "10".
	Value string
}

// QuotaFailure returns a google.rpc.QuotaFailure detail.
func QuotaFailure(violations ...QuotaViolation) map[string]any {
	vs := make([]any, len(violations))
	for i, v := range violations {
		m := map[string]any{"quotaMetric": v.Metric, "quotaId": v.ID}
		if v.Model != "" {
			m["quotaDimensions"] = map[string]any{"location": "global", "model": v.Model}
		}
		if v.Value != "" {
			m["quotaValue"] = v.Value
		}
		vs[i] = m
	}
	return map[string]any{"@type": TypeQuotaFailure, "violations": vs}
}

// RetryInfo returns a google.rpc.RetryInfo detail; the delay is encoded as a
// protobuf Duration string such as "15s" or "0.5s".
func RetryInfo(delay time.Duration) map[string]any {
	return map[string]any{"@type": TypeRetryInfo, "retryDelay": durationString(delay)}
}

// ErrorInfo returns a google.rpc.ErrorInfo detail, which carries a machine
// readable reason such as "API_KEY_INVALID" or, from Code Assist,
// "RATE_LIMIT_EXCEEDED" / "QUOTA_EXHAUSTED".
func ErrorInfo(reason, domain string, metadata map[string]string) map[string]any {
	m := map[string]any{"@type": TypeErrorInfo, "reason": reason, "domain": domain}
	if len(metadata) > 0 {
		m["metadata"] = metadata
	}
	return m
}

// durationString formats d as a protobuf Duration in JSON.
func durationString(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// quotaMessage is the API's human readable message for a quota error; it
// ends with the "Please retry in …" hint that some classifiers fall back on.
func quotaMessage(model, metric, limit string, delay time.Duration) string {
	return fmt.Sprintf("You exceeded your current quota, please check your plan and billing details. "+
		"For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n"+
		"* Quota exceeded for metric: generativelanguage.googleapis.com/%s, limit: %s, model: %s\n"+
		"Please retry in %s.", metric, limit, model, durationString(delay))
}

// quotaHelp is the Help detail that accompanies quota errors.
func quotaHelp() map[string]any {
	return map[string]any{"@type": TypeHelp, "links": []any{map[string]any{
		"description": "Learn more about Gemini API quotas",
		"url":         "https://ai.google.dev/gemini-api/docs/rate-limits",
	}}}
}
