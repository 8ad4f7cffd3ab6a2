package gateway

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/svc-dev/svc/internal/harness"
)

// Error is a failure a client may see, rendered in the gateway envelope
// { error: { code, message, param?, hint?, response_id? } }. Cause is only
// logged.
type Error struct {
	Status     int
	Code       string
	Message    string
	Param      string
	Hint       string
	ResponseID string
	Cause      error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// errorBody is the inner object of the envelope and of response.failed.
type errorBody struct {
	Code       string `json:"code"`
	Message    string `json:"message"`
	Param      string `json:"param,omitempty"`
	Hint       string `json:"hint,omitempty"`
	ResponseID string `json:"response_id,omitempty"`
}

func invalid(param, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "validation_error", Param: param, Message: fmt.Sprintf(format, args...)}
}

func newError(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// harnessStatus maps a harness error code to the status it gets outside a
// turn. The spec fixes the first group; the rest are our choice
// (docs/gateway.md).
func harnessStatus(code string) int {
	switch code {
	case "validation_error":
		return http.StatusBadRequest
	case "title_conflict", "session_busy":
		return http.StatusConflict
	case "rename_unsupported":
		return http.StatusMethodNotAllowed
	case "agent_unavailable", "auth_error":
		return http.StatusServiceUnavailable
	case "rate_limited":
		return http.StatusTooManyRequests
	case "quota_exhausted":
		return http.StatusPaymentRequired
	default:
		return http.StatusBadGateway
	}
}

// asError converts any handler error into the client-visible *Error; what
// is not already one becomes a 500 whose cause is logged under an id.
func asError(err error) *Error {
	var ge *Error
	if errors.As(err, &ge) {
		return ge
	}
	if he, ok := harness.AsError(err); ok {
		return &Error{Status: harnessStatus(he.Code), Code: he.Code, Message: he.Message, Param: he.Param, Hint: he.Hint, Cause: err}
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return newError(http.StatusRequestEntityTooLarge, "payload_too_large", "request body over %d bytes", mbe.Limit)
	}
	return &Error{Status: http.StatusInternalServerError, Code: "internal_error", Message: "internal error", Cause: err}
}

// handlerFunc is a gateway handler: it returns an error instead of writing
// one, and the adapter renders it, so no handler forgets to stop after an
// error.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle adapts h. An error after the response started (a stream) can no
// longer change the status; it is only logged.
func (s *Server) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &trackWriter{ResponseWriter: w}
		err := h(tw, r)
		if err == nil {
			return
		}
		e := asError(err)
		if e.Status >= 500 && e.Code == "internal_error" {
			id := randomID()[:12]
			e.Message = "internal error (request " + id + ")"
			s.log.Error("request failed", "request", id, "method", r.Method, "path", r.URL.Path, "err", err)
		} else if e.Cause != nil {
			s.log.Debug("request error", "method", r.Method, "path", r.URL.Path, "err", err)
		}
		if tw.wrote {
			s.log.Warn("error after response started", "path", r.URL.Path, "err", err)
			return
		}
		writeJSON(tw, e.Status, map[string]errorBody{"error": {
			Code: e.Code, Message: e.Message, Param: e.Param, Hint: e.Hint, ResponseID: e.ResponseID,
		}})
	})
}

// trackWriter remembers whether the response has started.
type trackWriter struct {
	http.ResponseWriter
	wrote bool
}

func (t *trackWriter) WriteHeader(code int) {
	t.wrote = true
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackWriter) Write(b []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(b)
}

// ReadFrom keeps sendfile for file downloads.
func (t *trackWriter) ReadFrom(r io.Reader) (int64, error) {
	t.wrote = true
	return io.Copy(t.ResponseWriter, r)
}

func (t *trackWriter) Flush() { t.FlushError() }

// FlushError lets http.ResponseController report a client that left.
func (t *trackWriter) FlushError() error {
	t.wrote = true
	return http.NewResponseController(t.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (t *trackWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

// randomID is 32 lowercase hex characters: response and session ids.
func randomID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
