package webtools

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
)

// HandlerFunc is a web tool handler: it returns an error instead of
// writing one, and Handle renders it.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Error is a failure the client may see, sent as {"error": Message}, the
// flat body the gateway's transport errors use.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s", e.Status, e.Message) }

// Errorf is an *Error with a formatted message.
func Errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

// Handle adapts h. An *Error is sent with its status; any other error is
// logged and answered 500 without detail. Once h has written, an error is
// only logged.
func Handle(log *slog.Logger, h HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &trackWriter{ResponseWriter: w}
		err := h(tw, r)
		if err == nil {
			return
		}
		var e *Error
		if !errors.As(err, &e) {
			log.Error("web tool request failed", "method", r.Method, "path", r.URL.Path, "err", err)
			e = &Error{Status: http.StatusInternalServerError, Message: "internal error"}
		}
		if tw.wrote {
			log.Warn("web tool error after the response started", "path", r.URL.Path, "err", err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(e.Status)
		json.NewEncoder(w).Encode(map[string]string{"error": e.Message})
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

// Unwrap lets http.ResponseController and WebSocket upgrades reach the
// connection. A handler that upgraded returns nil: the connection is no
// longer HTTP.
func (t *trackWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
