package generalb

import (
	"context"
	"fmt"

	"github.com/svc-dev/svc/internal/harness"
)

// Models is the catalog: the configured default and what the endpoint
// lists, as "provider/model" ids. Windows the endpoint does not give are
// the configured one, so the gateway's derived context uses it too.
func (h *Harness) Models(ctx context.Context) ([]harness.Model, error) {
	cfg := h.b.Cfg
	listed := h.b.Catalog.Models(ctx)
	def := cfg.Model
	if def == "" && len(listed) > 0 {
		def = listed[0].ID
	}
	windows := map[string]int64{}
	order := []string{}
	if def != "" {
		order = append(order, def)
	}
	for _, m := range listed {
		if _, ok := windows[m.ID]; !ok && m.ID != def {
			order = append(order, m.ID)
		}
		windows[m.ID] = m.ContextWindow
	}
	out := make([]harness.Model, 0, len(order))
	for _, id := range order {
		w := windows[id]
		if w <= 0 {
			w = cfg.ContextWindow
		}
		out = append(out, harness.Model{ID: cfg.Provider + "/" + id, Provider: cfg.Provider, ContextWindow: w, Default: id == def})
	}
	return out, nil
}

// resolve checks a requested model against the catalog and returns its
// catalog id. A bare model id the catalog has is accepted too.
func (h *Harness) resolve(ctx context.Context, requested string) (string, error) {
	models, _ := h.Models(ctx)
	for _, m := range models {
		if m.ID == requested || m.ID == h.b.Cfg.Provider+"/"+requested {
			return m.ID, nil
		}
	}
	ids := make([]string, 0, len(models))
	for _, m := range models {
		ids = append(ids, m.ID)
	}
	return "", &harness.Error{Code: "agent_error", Param: "model",
		Message: fmt.Sprintf("model %q is not in general-b's catalog %v; the session keeps its model", requested, ids),
		Hint:    "use an id from GET /v1/models?agent=general-b"}
}

// defaultModel is the catalog's default for sessions that never chose one.
func (h *Harness) defaultModel(ctx context.Context) (string, error) {
	models, _ := h.Models(ctx)
	for _, m := range models {
		if m.Default {
			return m.ID, nil
		}
	}
	return "", h.b.NoModel(ctx)
}

// Healthy is true when a model endpoint is configured and its /models
// answered within the catalog TTL.
func (h *Harness) Healthy(ctx context.Context) bool { return h.b.Catalog.Healthy(ctx) }
