package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/svc-dev/svc/internal/harness"
)

// createResponse is POST /v1/responses: validate, start the turn, then
// answer as JSON (headers at once, whitespace ticks, body at the end) or
// as an SSE stream.
func (s *Server) createResponse(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	if err != nil {
		return err
	}
	req, err := parseTurnRequest(body, s.cfg.MaxMetadataPairs, s.cfg.MaxMetadataBytes)
	if err != nil {
		return err
	}
	agent, h, err := s.resolveAgent("agent", req.Agent)
	if err != nil {
		return err
	}
	if err := checkIssued(r, h, req.SessionID); err != nil {
		return err
	}
	files, err := s.attachments(req.Files)
	if err != nil {
		return err
	}
	rec, err := s.startTurn(req, agent, h, files)
	if err != nil {
		return err
	}
	// Ids in headers let a JSON client cancel before its body arrives.
	w.Header().Set("X-Svc-Response-Id", rec.id)
	w.Header().Set("X-Svc-Session-Id", rec.object().SessionID)
	if req.Stream {
		return s.stream(w, r, rec, 1)
	}
	return s.waitJSON(w, r, rec)
}

// checkIssued rejects a session_id that a harness minting its own ids did
// not issue (spec: session_id on coding-b/c/d).
func checkIssued(r *http.Request, h harness.Harness, sessionID string) error {
	iss, ok := h.(harness.SessionIssuer)
	if !ok || sessionID == "" {
		return nil
	}
	issued, err := iss.Issued(r.Context(), sessionID)
	if err != nil {
		return err
	}
	if !issued {
		return &Error{Status: http.StatusBadRequest, Code: "validation_error", Param: "session_id",
			Message: "this agent mints its own session ids and did not issue " + sessionID,
			Hint:    "omit session_id on the first turn and reuse the returned one"}
	}
	return nil
}

// attachments resolves the files of a turn; each must be an existing
// regular file.
func (s *Server) attachments(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		abs, err := s.resolvePath("files", p)
		if err != nil {
			return nil, err
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return nil, invalid("files", "file %s does not exist", p)
		}
		if !fi.Mode().IsRegular() {
			return nil, invalid("files", "%s is not a regular file", p)
		}
		out = append(out, abs)
	}
	return out, nil
}

// waitJSON sends the 200 at once, a space every Tick while the turn runs,
// and the response object when it settles. A client that leaves does not
// stop the turn.
func (s *Server) waitJSON(w http.ResponseWriter, r *http.Request, rec *record) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if !s.send(w, rc, nil) {
		return nil
	}
	tick := time.NewTicker(s.cfg.Tick)
	defer tick.Stop()
	for {
		select {
		case <-rec.done:
			body, err := json.Marshal(rec.object())
			if err != nil {
				return err
			}
			s.send(w, rc, append(body, '\n'))
			return nil
		case <-tick.C:
			if !s.send(w, rc, space) {
				return nil
			}
		case <-r.Context().Done():
			return nil
		}
	}
}

var space = []byte(" ")

// streamResponse is GET /v1/responses/{id}/stream: replay, then live. A
// Last-Event-ID header resumes after that event.
func (s *Server) streamResponse(w http.ResponseWriter, r *http.Request) error {
	rec, err := s.record(r)
	if err != nil {
		return err
	}
	next := int64(1)
	if last, err := strconv.ParseInt(r.Header.Get("Last-Event-ID"), 10, 64); err == nil && last >= 0 {
		next = last + 1
	}
	return s.stream(w, r, rec, next)
}

// cancelResponse is POST /v1/responses/{id}/cancel: it acknowledges at
// once; the turn settles as cancelled when the harness unwinds.
func (s *Server) cancelResponse(w http.ResponseWriter, r *http.Request) error {
	rec, err := s.record(r)
	if err != nil {
		return err
	}
	rec.requestCancel()
	return writeJSON(w, http.StatusOK, rec.object())
}

func (s *Server) record(r *http.Request) (*record, error) {
	rec, ok := s.records.get(r.PathValue("id"))
	if !ok {
		return nil, &Error{Status: http.StatusNotFound, Code: "response_not_found",
			Message: "no response " + r.PathValue("id") + " (records expire about 30 minutes after the turn)",
			Hint:    "read the session's history instead"}
	}
	return rec, nil
}
