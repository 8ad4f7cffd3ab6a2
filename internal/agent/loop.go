package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/svc-dev/svc/internal/harness"
)

func event(name string, data map[string]any) harness.Event {
	return harness.Event{Name: name, Data: data}
}

// handlerError carries an emit failure through the model client untouched.
type handlerError struct{ err error }

func (e *handlerError) Error() string { return e.err.Error() }
func (e *handlerError) Unwrap() error { return e.err }

// loop calls the model until it answers without tool calls, running the
// tools it asks for in between. msgs is the conversation so far.
func (a *Agent) loop(ctx context.Context, t *turn, msgs []Message, emit func(harness.Event) error) (Outcome, error) {
	var out Outcome
	maxSteps := a.cfg.MaxSteps
	if t.depth > 0 {
		maxSteps = a.cfg.SubagentMaxSteps
	}
	defs := a.defs(t.depth > 0)
	msgs = append([]Message(nil), msgs...)
	for step := 0; ; step++ {
		// Past the step cap the model may no longer call tools, so a model
		// that loops still ends the turn with an answer.
		final := step >= maxSteps
		call := Call{Model: t.model, Messages: msgs, Tools: defs, ReasoningEffort: t.effort, Purpose: t.purpose}
		if final {
			call.ToolChoice = "none"
		}
		sep := out.Output != "" // separate this step's text from the last
		h := Handler{
			Reasoning: func(s string) error {
				out.Reasoning += s
				return wrap(emit(event(harness.ReasoningDelta, map[string]any{"text": s})))
			},
			Content: func(s string) error {
				if sep {
					s, sep = "\n\n"+s, false
				}
				out.Output += s
				return wrap(emit(event(harness.OutputTextDelta, map[string]any{"text": s})))
			},
			ToolName: func(name string) error {
				return wrap(emit(event(harness.ToolCallGenerating, map[string]any{"tool": name})))
			},
		}
		comp, err := a.cfg.Client.Stream(ctx, call, h)
		out.Steps++
		t.usage.add(comp.Usage)
		if comp.Usage != nil {
			out.Last = comp.Usage
		}
		if comp.Model != "" {
			out.Model = comp.Model
		}
		if err != nil {
			if comp.Content != "" {
				out.Trace = append(out.Trace, Message{Role: "assistant", Content: comp.Content})
			}
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			var he *handlerError
			if errors.As(err, &he) {
				return out, he.err
			}
			return out, err
		}
		msg := Message{Role: "assistant", Content: comp.Content, ToolCalls: comp.ToolCalls}
		if len(comp.ToolCalls) == 0 || final {
			msg.ToolCalls = nil
			out.Trace = append(out.Trace, msg)
			if len(comp.ToolCalls) > 0 {
				note := fmt.Sprintf("[stopped: the step limit of %d model calls was reached]", maxSteps)
				if out.Output != "" {
					note = "\n\n" + note
				}
				out.Output += note
				if err := emit(event(harness.OutputTextDelta, map[string]any{"text": note})); err != nil {
					return out, err
				}
			}
			return out, nil
		}
		for i := range msg.ToolCalls {
			if msg.ToolCalls[i].ID == "" {
				msg.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", step, i)
			}
		}
		msgs = append(msgs, msg)
		out.Trace = append(out.Trace, msg)
		for _, c := range msg.ToolCalls {
			result := "cancelled before it ran"
			if ctx.Err() == nil {
				var err error
				if result, err = a.callTool(ctx, t, c, emit); err != nil {
					return out, err
				}
			}
			res := Message{Role: "tool", ToolCallID: c.ID, Content: result}
			msgs = append(msgs, res)
			out.Trace = append(out.Trace, res)
		}
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
	}
}

func wrap(err error) error {
	if err == nil {
		return nil
	}
	return &handlerError{err}
}

// callTool runs one call between its started and completed/failed events
// and returns the text for the model. Its error is an emit failure only:
// tool failures go to the model.
func (a *Agent) callTool(ctx context.Context, t *turn, c ToolCall, emit func(harness.Event) error) (string, error) {
	name := c.Function.Name
	tl := a.byName[name]
	if tl != nil && tl.nested && t.depth > 0 {
		tl = nil // subagents do not delegate further
	}
	args, argErr := decodeArgs(c.Function.Arguments)
	started := map[string]any{"tool": name, "label": name}
	if argErr == nil {
		started["arguments"] = clipArgs(args, ArgClip)
		if tl != nil {
			started["label"] = tl.label(args)
		}
	}
	if err := emit(event(harness.ToolCallStarted, started)); err != nil {
		return "", err
	}
	begin := time.Now()
	var text string
	var err error
	switch {
	case tl == nil:
		err = fmt.Errorf("unknown tool %q", name)
	case argErr != nil:
		err = argErr
	default:
		text, err = tl.run(ctx, t, args)
	}
	if ctx.Err() != nil && err != nil {
		err = errors.New("cancelled")
	}
	text = clipString(text, a.cfg.ResultMax)
	if err != nil {
		if text == "" {
			text = "Error: " + err.Error()
		}
		return text, emit(event(harness.ToolCallFailed, map[string]any{"tool": name, "error": err.Error()}))
	}
	return text, emit(event(harness.ToolCallCompleted, map[string]any{"tool": name, "duration_ms": time.Since(begin).Milliseconds()}))
}
