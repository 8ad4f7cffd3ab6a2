package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/svc-dev/svc/internal/harness"
)

// apiError is the error object of OpenAI-style bodies. vLLM and the managed
// model use the same shape; Ollama sends {"error": "text"}.
type apiError struct {
	Message string
	Type    string
	Code    string
	// Hint is svc's extension: the managed model says what to do.
	Hint string
}

func parseAPIError(body []byte) apiError {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  any             `json:"detail"`
	}
	if json.Unmarshal(body, &env) != nil {
		return apiError{Message: strings.TrimSpace(clipString(string(body), 500))}
	}
	var s string
	if json.Unmarshal(env.Error, &s) == nil {
		return apiError{Message: s}
	}
	var obj struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
		Hint    string `json:"hint"`
	}
	if json.Unmarshal(env.Error, &obj) == nil && (obj.Message != "" || obj.Type != "" || obj.Code != nil) {
		e := apiError{Message: obj.Message, Type: obj.Type, Hint: obj.Hint}
		if obj.Code != nil {
			e.Code = fmt.Sprint(obj.Code)
		}
		return e
	}
	if env.Message != "" {
		return apiError{Message: env.Message}
	}
	if env.Detail != nil {
		return apiError{Message: fmt.Sprint(env.Detail)}
	}
	return apiError{}
}

// isContextLength recognises the ways endpoints say the prompt is too long:
// OpenAI's code, vLLM's and Ollama's messages.
func (e apiError) isContextLength() bool {
	if e.Code == "context_length_exceeded" || e.Type == "context_length_exceeded" {
		return true
	}
	m := strings.ToLower(e.Message)
	for _, s := range []string{"context length", "context_length", "context window", "maximum context", "too many tokens", "prompt is too long"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// statusError maps a failed model call to a turn error code. status is 0
// for an error object that arrived inside a stream.
func statusError(status int, body []byte) *harness.Error {
	e := parseAPIError(body)
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(status)
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return &harness.Error{Code: "auth_error", Message: msg,
			Hint: "check " + EnvAPIKey + " is a valid key for " + EnvBaseURL}
	case status == http.StatusPaymentRequired || e.Code == "insufficient_quota":
		// The managed model's message names the wallet balance or the
		// instance budget; it is what the user needs to read, so keep it.
		return &harness.Error{Code: "quota_exhausted", Message: msg,
			Hint: "top up the wallet or raise the instance budget, then retry"}
	case status == http.StatusTooManyRequests || e.Code == "rate_limit_exceeded":
		return &harness.Error{Code: "rate_limited", Message: msg, Hint: "retry with backoff"}
	case (status == http.StatusBadRequest || status == 0 || status == http.StatusRequestEntityTooLarge) && e.isContextLength():
		return &harness.Error{Code: "context_length", Message: msg,
			Hint: "start a new session or send a shorter input"}
	case status == http.StatusNotFound:
		return &harness.Error{Code: "agent_error", Message: fmt.Sprintf("model endpoint returned HTTP 404: %s", msg),
			Hint: "check the model id (GET /v1/models lists them) and that " + EnvBaseURL + " ends in /v1"}
	case status == 0:
		return &harness.Error{Code: "agent_error", Message: "model stream error: " + msg, Hint: e.Hint}
	}
	return &harness.Error{Code: "agent_error", Message: fmt.Sprintf("model endpoint returned HTTP %d: %s", status, msg), Hint: e.Hint}
}
