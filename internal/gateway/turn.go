package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/svc-dev/svc/internal/harness"
)

// defaultWindow is the context window assumed for a catalog model that
// lists none (spec: general-b context rule).
const defaultWindow = 128000

// harnessEvents are the names a harness may emit; the gateway owns
// response.created and the terminal events.
var harnessEvents = map[string]bool{
	harness.ReasoningDelta: true, harness.OutputTextDelta: true,
	harness.ToolCallGenerating: true, harness.ToolCallStarted: true,
	harness.ToolCallCompleted: true, harness.ToolCallFailed: true,
}

// startTurn registers a record for req and runs the turn in the
// background; the turn is independent of the request that started it.
// h is nil when the agent is not provisioned: the turn then fails with
// agent_unavailable, as the spec asks.
func (s *Server) startTurn(req turnRequest, agent string, h harness.Harness, files []string) (*record, error) {
	turn := harness.Turn{
		SessionID:       req.SessionID,
		Input:           req.Input,
		Files:           files,
		ReasoningEffort: req.ReasoningEffort,
	}
	if turn.SessionID == "" {
		turn.SessionID, turn.NewSession = randomID(), true
	}
	if req.Model != nil {
		turn.Model = *req.Model
	}
	if req.Provider != nil {
		turn.Provider = *req.Provider
	}
	if !s.admit() {
		return nil, newError(http.StatusServiceUnavailable, "unavailable", "the gateway is shutting down")
	}
	rec := newRecord(randomID(), turn.SessionID, agent, req, s.cfg)
	ctx, cancel := context.WithCancel(s.ctx)
	rec.cancel = cancel // before the record is visible to cancel calls
	if err := s.records.add(rec); err != nil {
		cancel()
		s.turns.Done()
		return nil, err
	}
	s.touch()
	created, _ := json.Marshal(map[string]string{"id": rec.id, "session_id": turn.SessionID})
	rec.mu.Lock()
	rec.push(eventCreated, created)
	rec.mu.Unlock()

	go func() {
		defer s.turns.Done()
		defer cancel()
		res, err := s.runHarness(ctx, h, agent, turn, rec)
		o := s.outcome(ctx, h, turn, res, err)
		if o.status == statusCompleted && o.context != nil {
			sid := turn.SessionID
			if o.sessionID != "" {
				sid = o.sessionID
			}
			s.contexts.put(sessionKey(agent, sid), *o.context)
		}
		s.records.release(rec)
		s.touch()
		rec.settle(o)
		s.records.finished(rec)
	}()
	return rec, nil
}

// admit counts a new turn unless the gateway is closing, so Close waits
// for every turn it did not refuse.
func (s *Server) admit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.turns.Add(1)
	return true
}

// runHarness runs the turn, turning a missing harness or a panic into a
// failed turn.
func (s *Server) runHarness(ctx context.Context, h harness.Harness, agent string, turn harness.Turn, rec *record) (res harness.Result, err error) {
	if h == nil {
		return res, &harness.Error{Code: "agent_unavailable", Message: unavailable(agent).Message}
	}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("harness panicked", "agent", agent, "response", rec.id, "panic", p, "stack", string(debug.Stack()))
			err = harness.Errorf("agent_error", "the agent crashed")
		}
	}()
	emit := func(ev harness.Event) error {
		if !harnessEvents[ev.Name] {
			s.log.Warn("harness emitted an unknown event; dropped", "agent", agent, "event", ev.Name)
			return nil
		}
		data := ev.Data
		if data == nil {
			data = map[string]any{}
		}
		b, err := json.Marshal(data)
		if err != nil {
			return fmt.Errorf("event %s: %w", ev.Name, err)
		}
		text, _ := data["text"].(string)
		s.touch()
		if !rec.emit(ev.Name, b, text) {
			return errors.New("the turn has ended")
		}
		return nil
	}
	return h.Run(ctx, turn, emit)
}

// outcome decides how a turn settled; ctx is the turn's own.
func (s *Server) outcome(ctx context.Context, h harness.Harness, turn harness.Turn, res harness.Result, err error) outcome {
	o := outcome{outputText: res.OutputText, usage: res.Usage, sessionID: res.SessionID}
	switch {
	case errors.Is(err, harness.ErrStopped):
		// A stop command: no run, so nothing to report.
		return outcome{status: statusCancelled, sessionID: res.SessionID}
	case err != nil && ctx.Err() != nil:
		// Cancelled by the client or by shutdown: whatever error the
		// unwinding produced, the turn was stopped, not failed.
		o.status = statusCancelled
	case err != nil:
		o.status = statusFailed
		if he, ok := harness.AsError(err); ok {
			o.err = &errorBody{Code: he.Code, Message: he.Message, Param: he.Param, Hint: he.Hint}
		} else {
			// No kind reported: the spec's agent_error, with the agent's
			// own words, which is what a user needs to see.
			o.err = &errorBody{Code: "agent_error", Message: err.Error()}
		}
	default:
		o.status = statusCompleted
		o.context = res.Context
		if o.context == nil {
			o.context = s.deriveContext(h, turn, res.Usage)
		}
	}
	return o
}

// deriveContext applies the spec's rule for harnesses that report no
// context: the turn's total tokens against the model's catalog window.
func (s *Server) deriveContext(h harness.Harness, turn harness.Turn, u *harness.Usage) *harness.Context {
	if u == nil {
		return nil
	}
	total := u.InputTokens + u.OutputTokens + u.CacheTokens
	model := u.Model
	if model == "" {
		model = turn.Model
	}
	if total == 0 || model == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.HealthTimeout)
	defer cancel()
	models, err := h.Models(ctx)
	if err != nil {
		s.log.Warn("model catalog unavailable; no context", "agent", h.ID(), "err", err)
		return nil
	}
	for _, m := range models {
		if m.ID == model || (m.Provider != "" && m.Provider+"/"+m.ID == model) {
			window := m.ContextWindow
			if window == 0 {
				window = defaultWindow
			}
			return &harness.Context{UsedTokens: total, WindowTokens: window}
		}
	}
	return nil
}
