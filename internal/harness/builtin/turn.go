package builtin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/svc-dev/svc/internal/agent"
	"github.com/svc-dev/svc/internal/agent/session"
	"github.com/svc-dev/svc/internal/harness"
)

// TurnSpec is a turn resolved by a harness: which model, which effort.
type TurnSpec struct {
	SessionID string
	Input     string
	Files     []string
	Model     string // endpoint model id
	Effort    string // endpoint reasoning_effort; empty omits it
	Persona   agent.Persona
	// SessionModel and Thinking initialise a session row this turn creates.
	SessionModel string
	Thinking     string
}

// RunTurn runs one turn on the stored conversation and records it. What
// gets recorded: a completed turn's exchange; a cancelled turn's input and
// output so far (nothing done is undone, so the next turn must know about
// it); a failed turn's input and partial work only when something happened
// before the failure (a tool ran or text arrived). A turn that failed before
// anything happened leaves the session as it was, so a retry does not
// duplicate the input.
func (b *Base) RunTurn(ctx context.Context, spec TurnSpec, emit func(harness.Event) error) (Outcome, error) {
	history, err := b.Store.Replay(ctx, spec.SessionID)
	if err != nil {
		return Outcome{}, err
	}
	modelInput := agent.AttachFiles(spec.Input, spec.Files, b.Cfg.AttachClip)
	msgs := make([]agent.Message, 0, len(history)+2)
	msgs = append(msgs, agent.Message{Role: "system", Content: agent.SystemPrompt(spec.Persona)})
	msgs = append(msgs, history...)
	msgs = append(msgs, agent.Message{Role: "user", Content: modelInput})
	started := Now()
	o, runErr := b.Agent.Run(ctx, agent.Request{Model: spec.Model, ReasoningEffort: spec.Effort, Messages: msgs}, emit)
	out := Outcome{Outcome: o}
	for _, m := range msgs {
		out.PromptBytes += len(m.Content)
	}

	cancelled := ctx.Err() != nil
	if runErr != nil && !cancelled && len(out.Trace) == 0 {
		return out, runErr
	}
	user := session.Entry{Role: "user", Content: visibleInput(spec.Input, spec.Files), CreatedAt: started}
	if modelInput != user.Content {
		user.Replay = []agent.Message{{Role: "user", Content: modelInput}}
	}
	entries := []session.Entry{user}
	if len(out.Trace) > 0 {
		entries = append(entries, session.Entry{Role: "assistant", Content: out.Output, Thinking: out.Reasoning,
			CreatedAt: max(Now(), started+1), Replay: out.Trace})
	}
	// Recording must outlive a cancelled turn's context.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := b.Store.Append(sctx, spec.SessionID, spec.SessionModel, spec.Thinking, entries); err != nil && runErr == nil {
		return out, harness.Errorf("agent_error", "saving the transcript: %v", err)
	}
	return out, runErr
}

// visibleInput is the user message as the transcript shows it: the input
// with the attached paths (their content went to the model only).
func visibleInput(input string, files []string) string {
	if len(files) == 0 {
		return input
	}
	var b strings.Builder
	b.WriteString(input)
	for _, f := range files {
		fmt.Fprintf(&b, "\n\n[Attached file: %s]", f)
	}
	return b.String()
}

// Outcome is a turn's outcome with the size of the prompt it started from.
type Outcome struct {
	agent.Outcome
	PromptBytes int
}

// Usage converts a turn's summed usage; model is reported as given.
func Usage(out Outcome, model string) *harness.Usage {
	if out.Usage == nil {
		return nil
	}
	return &harness.Usage{InputTokens: out.Usage.Prompt, OutputTokens: out.Usage.Completion,
		CacheTokens: out.Usage.Cached, CostUSD: out.Usage.CostUSD, Model: model}
}

// ContextUsed is the session's size after a turn: the last model call's
// prompt and completion, or an estimate (about four bytes a token) when
// the endpoint reported no usage.
func ContextUsed(out Outcome) int64 {
	if out.Last != nil {
		return out.Last.Prompt + out.Last.Completion
	}
	n := int64(out.PromptBytes)
	for _, m := range out.Trace {
		n += int64(len(m.Content))
		for _, c := range m.ToolCalls {
			n += int64(len(c.Function.Arguments))
		}
	}
	return n/4 + 1
}
