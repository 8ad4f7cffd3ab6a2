// Package generala is the general-a harness: the built-in agent with its
// own session database (titles generated after the first exchange, message
// counts, previews) and a context measurement on every completed turn.
package generala

import (
	"context"
	"sync"

	"github.com/svc-dev/svc/internal/agent"
	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/harness/builtin"
)

// Config is the shared built-in harness configuration.
type Config = builtin.Config

// Harness is general-a.
type Harness struct {
	b *builtin.Base
	// titling holds sessions whose title is being generated, so two quick
	// turns do not ask twice.
	titling sync.Map
}

var _ harness.Harness = (*Harness)(nil)

// New opens general-a's database (DataDir/sessions.db, by default
// ~/.svc-gateway/general-a/sessions.db).
func New(cfg Config) (*Harness, error) {
	b, err := builtin.Open(harness.GeneralA, cfg)
	if err != nil {
		return nil, err
	}
	return &Harness{b: b}, nil
}

// Close waits for pending title generation and closes the database.
func (h *Harness) Close() error { return h.b.Close() }

// Wait blocks until background work (title generation) is done.
func (h *Harness) Wait() { h.b.Wait() }

// ID is general-a.
func (h *Harness) ID() string { return harness.GeneralA }

// Run executes one turn. The model is the turn's (this turn only) or the
// configured default; the provider, when given, must be the configured one.
func (h *Harness) Run(ctx context.Context, turn harness.Turn, emit func(harness.Event) error) (harness.Result, error) {
	cfg := h.b.Cfg
	id := turn.SessionID
	if id == "" {
		id = builtin.NewSessionID()
	}
	if turn.Provider != "" && turn.Provider != cfg.Provider {
		return harness.Result{SessionID: id}, &harness.Error{Code: "agent_error",
			Message: "unknown provider " + turn.Provider + "; this instance has " + cfg.Provider, Param: "provider"}
	}
	if !h.b.Client.Configured() {
		return harness.Result{SessionID: id}, agent.NotConfigured()
	}
	model, err := h.model(ctx, turn.Model)
	if err != nil {
		return harness.Result{SessionID: id}, err
	}
	effort := turn.ReasoningEffort
	if effort == "" {
		effort = cfg.ReasoningEffort
	}
	out, err := h.b.RunTurn(ctx, builtin.TurnSpec{
		SessionID: id, Input: turn.Input, Files: turn.Files, Model: model,
		Effort:  builtin.EndpointEffort(effort),
		Persona: agent.Persona{Name: harness.GeneralA, Workspace: cfg.Workspace, Extra: cfg.Instructions},
	}, emit)
	res := harness.Result{OutputText: out.Output, Usage: builtin.Usage(out, model), SessionID: id}
	if err != nil {
		return res, mapError(err)
	}
	res.Context = &harness.Context{UsedTokens: builtin.ContextUsed(out), WindowTokens: h.b.Window(ctx, model)}
	h.maybeTitle(id, model)
	return res, nil
}

// mapError keeps general-b's own kinds out of general-a's vocabulary: an
// over-long prompt or a silent model is an agent_error here, with the
// endpoint's message and the hint kept.
func mapError(err error) error {
	if he, ok := harness.AsError(err); ok && (he.Code == "context_length" || he.Code == "timeout") {
		e := *he
		e.Code = "agent_error"
		return &e
	}
	return err
}

// model resolves the turn's model: the requested one, else SVC_MODEL, else
// the first model the endpoint lists.
func (h *Harness) model(ctx context.Context, requested string) (string, error) {
	if requested != "" {
		return requested, nil
	}
	if h.b.Cfg.Model != "" {
		return h.b.Cfg.Model, nil
	}
	if ms := h.b.Catalog.Models(ctx); len(ms) > 0 {
		return ms[0].ID, nil
	}
	return "", h.b.NoModel(ctx)
}

// Models lists the configured default first, then what the endpoint lists.
func (h *Harness) Models(ctx context.Context) ([]harness.Model, error) {
	cfg := h.b.Cfg
	listed := h.b.Catalog.Models(ctx)
	var out []harness.Model
	seen := map[string]bool{}
	add := func(id string, window int64, def bool) {
		if id == "" || seen[id] {
			return
		}
		seen[id] = true
		if window <= 0 {
			window = cfg.ContextWindow
		}
		out = append(out, harness.Model{ID: id, Provider: cfg.Provider, ContextWindow: window, Default: def})
	}
	def := cfg.Model
	if def == "" && len(listed) > 0 {
		def = listed[0].ID
	}
	for _, m := range listed {
		if m.ID == def {
			add(m.ID, m.ContextWindow, true)
		}
	}
	add(def, 0, true)
	for _, m := range listed {
		add(m.ID, m.ContextWindow, false)
	}
	if out == nil {
		out = []harness.Model{}
	}
	return out, nil
}

// Healthy is true when a model endpoint is configured and its /models
// answered within the catalog TTL.
func (h *Harness) Healthy(ctx context.Context) bool { return h.b.Catalog.Healthy(ctx) }
