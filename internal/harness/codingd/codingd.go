// Package codingd is coding-d: a coding agent on the managed model out of
// the box, with no account to connect. It is svc's own open-source agent
// loop (internal/agent) with a coding brief; like the spec's coding-d it
// mints its own session ids, so a session_id it did not issue is refused.
package codingd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/svc-dev/svc/internal/agent"
	"github.com/svc-dev/svc/internal/agent/session"
	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/harness/builtin"
)

// brief steers the general loop toward software work.
const brief = "You are a coding agent. Work in the repository the user names (default: the workspace). " +
	"Read the code before changing it, make focused edits, run the project's build and tests with the shell tool, " +
	"and report what you changed and how you verified it."

// Harness is coding-d.
type Harness struct {
	b *builtin.Base
	// minted holds ids issued to turns whose session is not stored yet
	// (the transcript is written when the turn ends).
	minted sync.Map
}

var (
	_ harness.Harness       = (*Harness)(nil)
	_ harness.SessionIssuer = (*Harness)(nil)
)

// New opens coding-d's session database (~/.svc-gateway/coding-d/).
func New(cfg builtin.Config) (*Harness, error) {
	b, err := builtin.Open(harness.CodingD, cfg)
	if err != nil {
		return nil, err
	}
	return &Harness{b: b}, nil
}

// Close closes the database.
func (h *Harness) Close() error { return h.b.Close() }

// ID is coding-d.
func (h *Harness) ID() string { return harness.CodingD }

// Issued reports whether coding-d minted sessionID.
func (h *Harness) Issued(ctx context.Context, sessionID string) (bool, error) {
	if _, ok := h.minted.Load(sessionID); ok {
		return true, nil
	}
	s, err := h.b.Store.Get(ctx, sessionID)
	return s != nil, err
}

// Run executes one turn; a new session gets an id minted here.
func (h *Harness) Run(ctx context.Context, turn harness.Turn, emit func(harness.Event) error) (harness.Result, error) {
	cfg := h.b.Cfg
	id := turn.SessionID
	if id == "" {
		id = builtin.NewSessionID()
	}
	if turn.NewSession || turn.SessionID == "" {
		// A new session: this id is issued by coding-d from now on.
		h.minted.Store(id, true)
		defer h.minted.Delete(id)
	}
	if !h.b.Client.Configured() {
		return harness.Result{SessionID: id}, agent.NotConfigured()
	}
	model := turn.Model
	if model == "" {
		model = cfg.Model
	}
	if model == "" {
		ms := h.b.Catalog.Models(ctx)
		if len(ms) == 0 {
			return harness.Result{SessionID: id}, h.b.NoModel(ctx)
		}
		model = ms[0].ID
	}
	effort := turn.ReasoningEffort
	if effort == "" {
		effort = cfg.ReasoningEffort
	}
	out, err := h.b.RunTurn(ctx, builtin.TurnSpec{
		SessionID: id, Input: turn.Input, Files: turn.Files, Model: model,
		Effort:  builtin.EndpointEffort(effort),
		Persona: agent.Persona{Name: harness.CodingD, Workspace: cfg.Workspace, Extra: strings.TrimSpace(brief + "\n" + cfg.Instructions)},
	}, emit)
	res := harness.Result{OutputText: out.Output, Usage: builtin.Usage(out, model), SessionID: id}
	if err != nil {
		return res, err
	}
	res.Context = &harness.Context{UsedTokens: builtin.ContextUsed(out), WindowTokens: h.b.Window(ctx, model)}
	return res, nil
}

// Sessions lists up to 100 sessions, most recent first.
func (h *Harness) Sessions(ctx context.Context) ([]harness.SessionRow, error) {
	list, err := h.b.Store.List(ctx, 100)
	if err != nil {
		return nil, err
	}
	rows := make([]harness.SessionRow, 0, len(list))
	for _, s := range list {
		rows = append(rows, harness.SessionRow{ID: s.ID, Title: s.Title, LastActive: &s.LastActive,
			MessageCount: &s.MessageCount, Preview: s.Preview})
	}
	return rows, nil
}

// History is the transcript; unknown ids have an empty one.
func (h *Harness) History(ctx context.Context, id string) ([]harness.Message, error) {
	return h.b.Store.History(ctx, id)
}

// Rename sets a unique title of at most 100 characters.
func (h *Harness) Rename(ctx context.Context, id, title string) (bool, error) {
	title = strings.TrimSpace(title)
	if title == "" || utf8.RuneCountInString(title) > 100 {
		return false, &harness.Error{Code: "validation_error", Param: "title", Message: "title must be 1 to 100 characters"}
	}
	ok, err := h.b.Store.Rename(ctx, id, title)
	if errors.Is(err, session.ErrTitleTaken) {
		return false, &harness.Error{Code: "title_conflict", Param: "title", Message: fmt.Sprintf("another session is already titled %q", title)}
	}
	return ok, err
}

// Delete removes a session and its transcript.
func (h *Harness) Delete(ctx context.Context, id string) (bool, error) {
	return h.b.Store.Delete(ctx, id)
}

// Healthy is true while the managed model answers.
func (h *Harness) Healthy(ctx context.Context) bool { return h.b.Catalog.Healthy(ctx) }

// Models lists what the endpoint serves.
func (h *Harness) Models(ctx context.Context) ([]harness.Model, error) {
	out := []harness.Model{}
	for _, m := range h.b.Catalog.Models(ctx) {
		out = append(out, harness.Model{ID: m.ID, Provider: h.b.Cfg.Provider, ContextWindow: m.ContextWindow, Default: m.ID == h.b.Cfg.Model})
	}
	return out, nil
}
