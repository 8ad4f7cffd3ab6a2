// Package api serves the hosting API at /v1. Handlers decode and validate,
// call one domain method, and encode; they return errors, which one adapter
// renders in the hosting envelope with the status of errors.go.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/svc-dev/svc/internal/auth"
	"github.com/svc-dev/svc/internal/fault"
	"github.com/svc-dev/svc/internal/store"
)

// HandlerFunc is an HTTP handler that returns its error.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle adapts a HandlerFunc, rendering its error.
func (a *API) handle(h HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			a.writeError(w, r, err)
		}
	})
}

type envelope struct {
	Error body `json:"error"`
}

type body struct {
	Code    fault.Code `json:"code"`
	Message string     `json:"message"`
	Detail  string     `json:"detail,omitempty"`
}

func (a *API) writeError(w http.ResponseWriter, r *http.Request, err error) {
	fe, ok := fault.As(err)
	if !ok {
		if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
			return // the client left; nobody reads the answer
		}
		id := requestID(r)
		a.log.Error("internal error", "request_id", id, "method", r.Method, "path", r.URL.Path, "err", err)
		fe = fault.New(fault.Internal, "internal error (request id %s)", id)
	} else if fe.Cause != nil {
		a.log.Info("request failed", "request_id", requestID(r), "code", fe.Code, "err", fe.Cause)
	}
	if fe.Code == fault.Unauthorized {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "unauthorized"})
		return
	}
	writeJSON(w, status(fe.Code), envelope{Error: body{Code: fe.Code, Message: fe.Message, Detail: fe.Detail}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// encode writes v as the JSON answer.
func encode(w http.ResponseWriter, status int, v any) error {
	writeJSON(w, status, v)
	return nil
}

// maxBody caps API request bodies.
const maxBody = 1 << 20

// decode reads a JSON body into v, refusing unknown fields. An empty body
// decodes as {} when optional is true.
func decode(r *http.Request, v any, optional bool) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody+1))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			if optional {
				return nil
			}
			return fault.Invalid("request body is required")
		}
		return invalidJSON(err)
	}
	if dec.More() {
		return fault.Invalid("request body has data after the JSON value")
	}
	return nil
}

// invalidJSON turns a decoder error into a client message.
func invalidJSON(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		return fault.Invalid("field %s must be %s", typeErr.Field, kind(typeErr.Type.String()))
	case errors.As(err, &syntaxErr):
		return fault.Invalid("malformed JSON at byte %d", syntaxErr.Offset)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fault.Invalid("unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fault.Invalid("truncated JSON body")
	}
	return fault.Invalid("invalid JSON body: %v", err)
}

func kind(goType string) string {
	switch {
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "*int"):
		return "an integer"
	case strings.Contains(goType, "string"):
		return "a string"
	case strings.Contains(goType, "bool"):
		return "a boolean"
	case strings.HasPrefix(goType, "map"), strings.Contains(goType, "struct"), strings.Contains(goType, "sdk."):
		return "an object"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	}
	return fmt.Sprintf("of type %s", goType)
}

type ctxKey int

const (
	workspaceKey ctxKey = iota
	requestIDKey
)

// Workspace is the caller's workspace, set by the key check.
func Workspace(ctx context.Context) store.Workspace {
	w, _ := ctx.Value(workspaceKey).(store.Workspace)
	return w
}

func requestID(r *http.Request) string {
	id, _ := r.Context().Value(requestIDKey).(string)
	return id
}

// authenticate checks the bearer key before anything else answers, so
// unknown paths are 404 only for callers with a valid key.
func (a *API) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := auth.Random(12, "0123456789abcdef")
		w.Header().Set("X-Request-Id", id)
		ctx := context.WithValue(r.Context(), requestIDKey, id)
		r = r.WithContext(ctx)
		key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || key == "" {
			a.writeError(w, r, fault.New(fault.Unauthorized, "no credentials"))
			return
		}
		ws, err := auth.Lookup(ctx, a.st, strings.TrimSpace(key))
		if errors.Is(err, auth.ErrUnknownKey) {
			a.writeError(w, r, fault.New(fault.Unauthorized, "unknown key"))
			return
		}
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, workspaceKey, ws)))
	})
}

// logRequests logs one line per request.
func logRequests(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", rec.status, "request_id", w.Header().Get("X-Request-Id"))
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Flush keeps streaming answers (logs) streaming through the recorder.
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
