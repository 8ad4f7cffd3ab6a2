package gateway

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/svc-dev/svc/internal/harness"
)

// scriptHarness is our own small harness for testing the gateway before
// the built-in agents land: its Run is a function each test sets, and it
// keeps sessions in memory with general-a's rules (unique titles).
type scriptHarness struct {
	id string

	mu        sync.Mutex
	run       func(ctx context.Context, t harness.Turn, emit func(harness.Event) error) (harness.Result, error)
	models    []harness.Model
	healthy   bool
	sessions  map[string]*scriptSession
	turns     []harness.Turn
	clock     int64 // orders last_active without depending on timing
	renameErr error
}

type scriptSession struct {
	title    *string
	messages []harness.Message
	active   int64
}

func newScriptHarness(id string) *scriptHarness {
	return &scriptHarness{id: id, healthy: true, sessions: map[string]*scriptSession{},
		models: []harness.Model{{ID: "m1", ContextWindow: 64000, Default: true}, {ID: "m2"}}}
}

func (h *scriptHarness) setRun(f func(ctx context.Context, t harness.Turn, emit func(harness.Event) error) (harness.Result, error)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.run = f
}

func (h *scriptHarness) ID() string { return h.id }

// echo is the default turn: a reasoning delta, the answer in two deltas.
func echo(ctx context.Context, t harness.Turn, emit func(harness.Event) error) (harness.Result, error) {
	answer := "echo: " + t.Input
	emit(harness.Event{Name: harness.ReasoningDelta, Data: map[string]any{"text": "thinking"}})
	emit(harness.Event{Name: harness.OutputTextDelta, Data: map[string]any{"text": answer[:len(answer)/2]}})
	emit(harness.Event{Name: harness.OutputTextDelta, Data: map[string]any{"text": answer[len(answer)/2:]}})
	return harness.Result{OutputText: answer, Usage: &harness.Usage{InputTokens: 10, OutputTokens: 5, Model: "m1"}}, nil
}

func (h *scriptHarness) Run(ctx context.Context, t harness.Turn, emit func(harness.Event) error) (harness.Result, error) {
	h.mu.Lock()
	run := h.run
	if run == nil {
		run = echo
	}
	h.turns = append(h.turns, t)
	h.mu.Unlock()
	res, err := run(ctx, t, emit)
	if err == nil {
		h.mu.Lock()
		s := h.sessions[t.SessionID]
		if s == nil {
			s = &scriptSession{}
			h.sessions[t.SessionID] = s
		}
		now := time.Now().UnixMilli()
		h.clock++
		s.active = h.clock
		s.messages = append(s.messages,
			harness.Message{ID: fmt.Sprint("u", len(s.messages)), SessionID: t.SessionID, Role: "user", Content: t.Input, CreatedAt: now},
			harness.Message{ID: fmt.Sprint("a", len(s.messages)+1), SessionID: t.SessionID, Role: "assistant", Content: res.OutputText, CreatedAt: now})
		h.mu.Unlock()
	}
	return res, err
}

func (h *scriptHarness) Sessions(ctx context.Context) ([]harness.SessionRow, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var rows []harness.SessionRow
	for id, s := range h.sessions {
		n := int64(len(s.messages))
		active := s.active
		preview := s.messages[0].Content
		rows = append(rows, harness.SessionRow{ID: id, Title: s.title, LastActive: &active, MessageCount: &n, Preview: &preview})
	}
	slices.SortFunc(rows, func(a, b harness.SessionRow) int { return int(*b.LastActive - *a.LastActive) })
	return rows, nil
}

func (h *scriptHarness) History(ctx context.Context, id string) ([]harness.Message, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.sessions[id]; s != nil {
		return slices.Clone(s.messages), nil
	}
	return nil, nil
}

func (h *scriptHarness) Rename(ctx context.Context, id, title string) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.renameErr != nil {
		return false, h.renameErr
	}
	for other, s := range h.sessions {
		if other != id && s.title != nil && strings.EqualFold(*s.title, title) {
			return false, harness.Errorf("title_conflict", "title %q is used by another session", title)
		}
	}
	s := h.sessions[id]
	if s == nil {
		return false, nil
	}
	s.title = &title
	return true, nil
}

func (h *scriptHarness) Delete(ctx context.Context, id string) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.sessions[id]
	delete(h.sessions, id)
	return ok, nil
}

func (h *scriptHarness) Healthy(ctx context.Context) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.healthy
}

func (h *scriptHarness) Models(ctx context.Context) ([]harness.Model, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.models), nil
}

func (h *scriptHarness) lastTurn() harness.Turn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.turns[len(h.turns)-1]
}
