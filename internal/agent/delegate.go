package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/svc-dev/svc/internal/harness"
)

// SubagentPurpose marks subagent model calls (harness.PurposeHeader).
const SubagentPurpose = "subagent"

func delegateTool() *tool {
	return &tool{
		def: FunctionDef{
			Name: "delegate_task",
			Description: "Hand independent subtasks to subagents that work concurrently, each with its own " +
				"conversation and the same tools (except delegate_task), and get their reports back. Subagents " +
				"do not see this conversation: each task must say everything needed. Use it for work that " +
				"splits into parts that do not depend on each other.",
			Parameters: schema([]string{"tasks"}, map[string]map[string]any{
				"tasks":   {"type": "array", "items": map[string]any{"type": "string"}, "description": "one complete instruction per subagent"},
				"context": prop("string", "background shared by every task (optional)"),
			}),
		},
		label: func(args map[string]any) string {
			tasks := delegateTasks(args)
			if len(tasks) == 1 {
				return "Delegating: " + oneLine(tasks[0], 120)
			}
			return fmt.Sprintf("Delegating %d tasks", len(tasks))
		},
		run:    delegate,
		nested: true,
	}
}

// delegateTasks accepts "tasks" as an array or a single string, and "task"
// as models sometimes shorten it.
func delegateTasks(args map[string]any) []string {
	var out []string
	switch v := args["tasks"].(type) {
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok && strings.TrimSpace(s) != "" {
				out = append(out, s)
			}
		}
	case string:
		if strings.TrimSpace(v) != "" {
			out = append(out, v)
		}
	}
	if s := str(args, "task"); strings.TrimSpace(s) != "" {
		out = append(out, s)
	}
	return out
}

// delegate runs one nested loop per task. Subagents emit nothing to the
// turn's stream (the spec lets only keep-alives flow between the started
// and completed events), share the turn's context, so cancelling the turn
// stops them, and add their usage to the turn's.
func delegate(ctx context.Context, t *turn, args map[string]any) (string, error) {
	tasks := delegateTasks(args)
	a := t.agent
	if len(tasks) == 0 {
		return "", errors.New(`"tasks" must list at least one task`)
	}
	if len(tasks) > a.cfg.MaxTasks {
		return "", fmt.Errorf("at most %d tasks per call (got %d)", a.cfg.MaxTasks, len(tasks))
	}
	background := str(args, "context")
	type report struct {
		text string
		err  error
	}
	reports := make([]report, len(tasks))
	sem := make(chan struct{}, a.cfg.MaxSubagents)
	var wg sync.WaitGroup
	for i, task := range tasks {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				reports[i].err = ctx.Err()
				return
			}
			defer func() { <-sem }()
			input := task
			if background != "" {
				input = "Background:\n" + background + "\n\nTask:\n" + task
			}
			msgs := []Message{{Role: "system", Content: SubagentPrompt(a.cfg.Workspace)}, {Role: "user", Content: input}}
			sub := &turn{agent: a, model: t.model, effort: t.effort, purpose: SubagentPurpose, depth: t.depth + 1, usage: t.usage}
			o, err := a.loop(ctx, sub, msgs, discard)
			reports[i] = report{o.Output, err}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return "", err
	}
	var b strings.Builder
	failed := 0
	for i, r := range reports {
		fmt.Fprintf(&b, "## Subagent %d: %s\n", i+1, oneLine(tasks[i], 200))
		if r.err != nil {
			failed++
			fmt.Fprintf(&b, "FAILED: %v\n", r.err)
			if r.text != "" {
				fmt.Fprintf(&b, "Partial report:\n%s\n", r.text)
			}
		} else if strings.TrimSpace(r.text) == "" {
			b.WriteString("(no report)\n")
		} else {
			b.WriteString(r.text + "\n")
		}
		b.WriteString("\n")
	}
	if failed == len(tasks) {
		return b.String(), fmt.Errorf("all %d subagents failed", failed)
	}
	return b.String(), nil
}

func discard(harness.Event) error { return nil }
