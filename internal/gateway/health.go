package gateway

import (
	"context"
	"net/http"

	"github.com/svc-dev/svc/internal/harness"
)

// Version is this gateway's release, reported by GET /v1/version. It is at
// least 0.15.1 because subagents run inside the turn and max/ultra effort
// are accepted; release builds set it with
// -ldflags "-X github.com/svc-dev/svc/internal/gateway.Version=X.Y.Z".
var Version = "0.16.0"

func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	agent, h, err := s.resolveAgent("agent", r.URL.Query().Get("agent"))
	if err != nil {
		return err
	}
	healthy := false
	if h != nil {
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.HealthTimeout)
		healthy = h.Healthy(ctx)
		cancel()
	}
	body := map[string]any{"ok": true, "agent": agent, "healthy": healthy}
	if hinter, ok := h.(harness.Hinter); ok && !healthy {
		// Beyond the spec: what to do to make the harness healthy.
		body["hint"] = hinter.Hint()
	}
	if agent == harness.GeneralA {
		// The legacy field of the original interface, named after
		// general-a's harness there; it mirrors healthy.
		body["hermes"] = healthy
	}
	return writeJSON(w, http.StatusOK, body)
}

func (s *Server) version(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, http.StatusOK, map[string]string{"name": "svc-gateway", "version": Version})
}

// models is GET /v1/models: { agent, data: [{ id, provider?,
// context_window?, default? }] } for the default or ?agent= harness.
func (s *Server) models(w http.ResponseWriter, r *http.Request) error {
	agent, h, err := s.provisioned(r)
	if err != nil {
		return err
	}
	list, err := h.Models(r.Context())
	if err != nil {
		return err
	}
	if list == nil {
		list = []harness.Model{}
	}
	return writeJSON(w, http.StatusOK, struct {
		Agent string          `json:"agent"`
		Data  []harness.Model `json:"data"`
	}{agent, list})
}
