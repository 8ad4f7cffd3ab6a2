package edge

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// Error is a transport error of the edge: a flat {"error": code} body,
// with a message only where it helps the caller and reveals nothing.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s %s", e.Status, e.Code, e.Message) }

// The edge's answers of its own.
var (
	errUnauthorized = &Error{Status: http.StatusUnauthorized, Code: "unauthorized"}
	errNotFound     = &Error{Status: http.StatusNotFound, Code: "not_found"}
	errSuspended    = &Error{Status: http.StatusPaymentRequired, Code: "instance_suspended"}
	errWakeTimeout  = &Error{Status: http.StatusServiceUnavailable, Code: "wake_timeout"}
)

// unavailable is the 503 of a stopped, failed or suspended instance. The
// message (authenticated callers only) says what to do.
func unavailable(msg string) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: msg}
}

// badGateway is a running instance with nothing listening on the port.
func badGateway(port int) *Error {
	return &Error{Status: http.StatusBadGateway, Code: "bad_gateway",
		Message: fmt.Sprintf("nothing accepts connections on port %d of the instance", port)}
}

func writeError(w http.ResponseWriter, e *Error) {
	body := map[string]string{"error": e.Code}
	if e.Message != "" {
		body["message"] = e.Message
	}
	writeJSON(w, e.Status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
