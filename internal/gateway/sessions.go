package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/svc-dev/svc/internal/harness"
)

// Session calls project the harness's own sessions; the gateway adds only
// active_response_id and the remembered context.

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) error {
	agent, h, err := s.provisioned(r)
	if err != nil {
		return err
	}
	rows, err := h.Sessions(r.Context())
	if err != nil {
		return err
	}
	if rows == nil {
		rows = []harness.SessionRow{}
	}
	return writeJSON(w, http.StatusOK, struct {
		Agent string               `json:"agent"`
		Data  []harness.SessionRow `json:"data"`
	}{agent, rows})
}

func (s *Server) readSession(w http.ResponseWriter, r *http.Request) error {
	agent, h, id, err := s.session(r)
	if err != nil {
		return err
	}
	history, err := h.History(r.Context(), id)
	if err != nil {
		return err
	}
	if history == nil {
		history = []harness.Message{}
	}
	var active *string
	if rid := s.records.active(agent, id); rid != "" {
		active = &rid
	}
	return writeJSON(w, http.StatusOK, struct {
		ID               string            `json:"id"`
		Agent            string            `json:"agent"`
		ActiveResponseID *string           `json:"active_response_id"`
		History          []harness.Message `json:"history"`
		Context          *harness.Context  `json:"context"`
	}{id, agent, active, history, s.contexts.get(sessionKey(agent, id))})
}

// renameRequest is the PATCH /v1/sessions/{id} body; other fields are
// ignored.
type renameRequest struct {
	Title string
}

func parseRenameRequest(body []byte) (renameRequest, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return renameRequest{}, invalid("", "request body must be a JSON object")
	}
	var title string
	if raw, ok := fields["title"]; !ok || json.Unmarshal(raw, &title) != nil {
		return renameRequest{}, invalid("title", "title is required and must be a string")
	}
	title = strings.TrimSpace(title)
	if title == "" {
		return renameRequest{}, invalid("title", "title must not be empty")
	}
	return renameRequest{Title: title}, nil
}

func (s *Server) renameSession(w http.ResponseWriter, r *http.Request) error {
	agent, h, id, err := s.session(r)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxSmallBody))
	if err != nil {
		return err
	}
	req, err := parseRenameRequest(body)
	if err != nil {
		return err
	}
	renamed, err := h.Rename(r.Context(), id, req.Title)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, struct {
		ID      string `json:"id"`
		Agent   string `json:"agent"`
		Renamed bool   `json:"renamed"`
	}{id, agent, renamed})
}

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) error {
	agent, h, id, err := s.session(r)
	if err != nil {
		return err
	}
	deleted, err := h.Delete(r.Context(), id)
	if err != nil {
		return err
	}
	s.contexts.forget(sessionKey(agent, id))
	return writeJSON(w, http.StatusOK, struct {
		ID      string `json:"id"`
		Deleted bool   `json:"deleted"`
	}{id, deleted})
}

// session resolves a call on one session: the harness it routes to (which
// must be provisioned) and the session id from the path.
func (s *Server) session(r *http.Request) (agent string, h harness.Harness, id string, err error) {
	if agent, h, err = s.provisioned(r); err != nil {
		return "", nil, "", err
	}
	id, err = sessionParam(r)
	return agent, h, id, err
}

func sessionParam(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if !validSessionID(id) {
		return "", invalid("id", "session id must be 1 to 128 characters of A-Z a-z 0-9 . _ -")
	}
	return id, nil
}
