// Package generalb is the general-b harness: the built-in agent with
// general-b's rules. Model ids are "provider/model" and the model sticks to
// the session; reasoning_effort selects a thinking level; "stop" and "exit"
// end a turn without a run; titles are labels the user sets; deleting a
// session archives it. It measures no context of its own: the gateway
// derives one from the usage and the model catalog.
package generalb

import (
	"context"
	"strings"

	"github.com/svc-dev/svc/internal/agent"
	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/harness/builtin"
)

// Config is the shared built-in harness configuration; ReasoningEffort is
// the thinking level new sessions start with.
type Config = builtin.Config

// Harness is general-b.
type Harness struct {
	b *builtin.Base
}

var _ harness.Harness = (*Harness)(nil)

// New opens general-b's database (DataDir/sessions.db, by default
// ~/.svc-gateway/general-b/sessions.db).
func New(cfg Config) (*Harness, error) {
	if cfg.ReasoningEffort != "" {
		cfg.ReasoningEffort = Level(cfg.ReasoningEffort)
	}
	b, err := builtin.Open(harness.GeneralB, cfg)
	if err != nil {
		return nil, err
	}
	return &Harness{b: b}, nil
}

// Close closes the database.
func (h *Harness) Close() error { return h.b.Close() }

// ID is general-b.
func (h *Harness) ID() string { return harness.GeneralB }

// stopCommands end a turn before it starts.
var stopCommands = map[string]bool{"stop": true, "exit": true}

// IsStop reports whether input is a stop command (trimmed, any case).
func IsStop(input string) bool { return stopCommands[strings.ToLower(strings.TrimSpace(input))] }

// Level maps a reasoning_effort value to general-b's thinking level: one to
// one, except "none", which general-b calls "off".
func Level(effort string) string {
	if effort == "none" {
		return "off"
	}
	return effort
}

// Run executes one turn. A requested model is checked against the catalog
// and written to the session before the run (a rejected one leaves the
// session's model as it was); an omitted one uses the session's.
func (h *Harness) Run(ctx context.Context, turn harness.Turn, emit func(harness.Event) error) (harness.Result, error) {
	if IsStop(turn.Input) {
		return harness.Result{SessionID: turn.SessionID}, harness.ErrStopped
	}
	id := turn.SessionID
	if id == "" {
		id = builtin.NewSessionID()
	}
	res := harness.Result{SessionID: id}
	if !h.b.Client.Configured() {
		return res, agent.NotConfigured()
	}
	sess, err := h.b.Store.Get(ctx, id)
	if err != nil {
		return res, err
	}
	modelID := ""
	if sess != nil {
		modelID = sess.Model
	}
	if turn.Model != "" {
		resolved, err := h.resolve(ctx, turn.Model)
		if err != nil {
			return res, err
		}
		modelID = resolved
		if _, err := h.b.Store.Ensure(ctx, id, modelID, h.b.Cfg.ReasoningEffort, builtin.Now()); err != nil {
			return res, err
		}
		if err := h.b.Store.SetModel(ctx, id, modelID); err != nil {
			return res, err
		}
	}
	if modelID == "" {
		if modelID, err = h.defaultModel(ctx); err != nil {
			return res, err
		}
	}
	level := h.b.Cfg.ReasoningEffort
	if sess != nil {
		level = sess.Thinking
	}
	if turn.ReasoningEffort != "" {
		level = Level(turn.ReasoningEffort) // this turn only
	}
	_, model := split(modelID)
	out, err := h.b.RunTurn(ctx, builtin.TurnSpec{
		SessionID: id, Input: turn.Input, Files: turn.Files, Model: model,
		Effort: builtin.EndpointEffort(level),
		Persona: agent.Persona{Name: harness.GeneralB, Workspace: h.b.Cfg.Workspace,
			Delegate: level == "ultra", Extra: h.b.Cfg.Instructions},
		SessionModel: modelID, Thinking: h.b.Cfg.ReasoningEffort,
	}, emit)
	res.OutputText = out.Output
	res.Usage = builtin.Usage(out, modelID)
	return res, err
}

// split cuts "provider/model" at the first slash (model ids may contain
// more slashes, as in "svc/meta-llama/Llama-3.1-8B").
func split(id string) (provider, model string) {
	p, m, ok := strings.Cut(id, "/")
	if !ok {
		return "", id
	}
	return p, m
}
