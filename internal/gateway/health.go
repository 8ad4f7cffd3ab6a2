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
	hs, err := s.Health(r.Context(), r.URL.Query().Get("agent"))
	if err != nil {
		return err
	}
	body := map[string]any{"ok": true, "agent": hs.Agent, "healthy": hs.Healthy}
	if hs.Hint != "" {
		// Beyond the spec: what to do to make the harness healthy.
		body["hint"] = hs.Hint
	}
	if hs.Agent == harness.GeneralA {
		// The legacy field of the original interface, named after
		// general-a's harness there; it mirrors healthy.
		body["hermes"] = hs.Healthy
	}
	return writeJSON(w, http.StatusOK, body)
}

// HealthStatus is the answer of a harness health probe.
type HealthStatus struct {
	Agent   string // the harness probed
	Healthy bool   // false too when the harness is not provisioned
	// Hint says what would make an unhealthy harness healthy, when the
	// harness knows (harness.Hinter).
	Hint string
}

// Health probes the harness agent (the instance default when empty),
// bounded by Config.HealthTimeout. The instance dashboard shows it.
func (s *Server) Health(ctx context.Context, agent string) (HealthStatus, error) {
	id, h, err := s.resolveAgent("agent", agent)
	if err != nil {
		return HealthStatus{}, err
	}
	hs := HealthStatus{Agent: id}
	if h != nil {
		ctx, cancel := context.WithTimeout(ctx, s.cfg.HealthTimeout)
		hs.Healthy = h.Healthy(ctx)
		cancel()
	}
	if hinter, ok := h.(harness.Hinter); ok && !hs.Healthy {
		hs.Hint = hinter.Hint()
	}
	return hs, nil
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
