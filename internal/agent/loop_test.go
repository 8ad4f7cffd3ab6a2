package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/modeltest"
)

func TestStreamsReasoningAndText(t *testing.T) {
	a, srv := setup(t, modeltest.Config{APIKey: "sk-test"}, nil)
	srv.Script(modeltest.Reply{Reasoning: "let me think about ünïcode", Content: "The answer is 42, naïvely.", ChunkSize: 3,
		Usage: &modeltest.Usage{PromptTokens: 120, CompletionTokens: 30}})
	out, rec, err := run(t, a, Request{Model: "test-model", Messages: user("question")})
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.text(harness.ReasoningDelta); got != "let me think about ünïcode" {
		t.Fatalf("reasoning %q", got)
	}
	if got := rec.text(harness.OutputTextDelta); got != "The answer is 42, naïvely." || out.Output != got {
		t.Fatalf("text %q, output %q", got, out.Output)
	}
	if len(rec.all()) < 10 {
		t.Fatalf("expected many small deltas, got %d events", len(rec.all()))
	}
	if diff := cmp.Diff([]string{harness.ReasoningDelta, harness.OutputTextDelta}, rec.names()); diff != "" {
		t.Fatalf("event order (-want +got):\n%s", diff)
	}
	if out.Reasoning != "let me think about ünïcode" || out.Usage == nil || out.Usage.Prompt != 120 || out.Usage.Completion != 30 {
		t.Fatalf("outcome %+v usage %+v", out, out.Usage)
	}
	if len(out.Trace) != 1 || out.Trace[0].Role != "assistant" || out.Trace[0].Content != out.Output {
		t.Fatalf("trace %+v", out.Trace)
	}
	req := srv.Requests()[0]
	if !req.Stream || req.StreamOptions == nil || !req.StreamOptions.IncludeUsage || req.Model != "test-model" {
		t.Fatalf("request %+v", req)
	}
	if req.ReasoningEffort != "" {
		t.Fatalf("reasoning_effort sent though unset: %q", req.ReasoningEffort)
	}
	if req.Header.Get(harness.PurposeHeader) != "" || req.Header.Get("Authorization") != "Bearer sk-test" {
		t.Fatalf("headers %v", req.Header)
	}
	want := []string{"shell", "read_file", "write_file", "edit_file", "list_directory", "web_fetch", "delegate_task"}
	if diff := cmp.Diff(want, req.ToolNames()); diff != "" {
		t.Fatalf("tools (-want +got):\n%s", diff)
	}
}

func TestReasoningEffortIsSent(t *testing.T) {
	a, srv := setup(t, modeltest.Config{}, nil)
	if _, _, err := run(t, a, Request{Model: "m", ReasoningEffort: "high", Messages: user("x")}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].ReasoningEffort; got != "high" {
		t.Fatalf("reasoning_effort %q", got)
	}
}

func TestWriteFileToolCall(t *testing.T) {
	a, srv := setup(t, modeltest.Config{}, nil)
	srv.Script(
		modeltest.Reply{Content: "Writing it.", ToolCalls: []modeltest.ToolCall{{ID: "c1", Name: "write_file",
			Arguments: args(map[string]string{"path": "notes/hello.txt", "content": "hello from the agent\n"})}}, ChunkSize: 5},
		modeltest.Reply{Content: "Done."},
	)
	out, rec, err := run(t, a, Request{Model: "m", Messages: user("write a file")})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(a.Workspace(), "notes", "hello.txt")
	if b, err := os.ReadFile(path); err != nil || string(b) != "hello from the agent\n" {
		t.Fatalf("file: %q %v", b, err)
	}
	want := []string{harness.OutputTextDelta, harness.ToolCallGenerating, harness.ToolCallStarted, harness.ToolCallCompleted, harness.OutputTextDelta}
	if diff := cmp.Diff(want, rec.names()); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	ev := rec.all()
	var started, completed harness.Event
	for _, e := range ev {
		switch e.Name {
		case harness.ToolCallStarted:
			started = e
		case harness.ToolCallCompleted:
			completed = e
		case harness.ToolCallGenerating:
			if e.Data["tool"] != "write_file" {
				t.Fatalf("generating %v", e.Data)
			}
		}
	}
	if started.Data["tool"] != "write_file" || started.Data["label"] != "Writing notes/hello.txt" {
		t.Fatalf("started %v", started.Data)
	}
	if a := started.Data["arguments"].(map[string]any); a["path"] != "notes/hello.txt" || a["content"] != "hello from the agent\n" {
		t.Fatalf("arguments %v", a)
	}
	if _, ok := completed.Data["duration_ms"].(int64); !ok || completed.Data["tool"] != "write_file" {
		t.Fatalf("completed %v", completed.Data)
	}
	if out.Output != "Writing it.\n\nDone." || rec.text(harness.OutputTextDelta) != out.Output {
		t.Fatalf("output %q", out.Output)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	second := reqs[1].Messages
	call, result := second[len(second)-2], second[len(second)-1]
	if call.Role != "assistant" || len(call.ToolCalls) != 1 || call.ToolCalls[0].ID != "c1" || call.ToolCalls[0].Function.Name != "write_file" {
		t.Fatalf("assistant call message %+v", call)
	}
	if result.Role != "tool" || result.ToolCallID != "c1" || !strings.Contains(result.Text(), "wrote 21 bytes to "+path) {
		t.Fatalf("tool result %+v %q", result, result.Text())
	}
	// The trace replays the same exchange on the next turn.
	if len(out.Trace) != 3 || out.Trace[1].Role != "tool" || out.Trace[2].Content != "Done." {
		t.Fatalf("trace %+v", out.Trace)
	}
}

func TestLongArgumentsAreClippedInEvents(t *testing.T) {
	a, srv := setup(t, modeltest.Config{}, nil)
	long := strings.Repeat("é", 500)
	srv.Script(modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "write_file", Arguments: args(map[string]string{"path": "big.txt", "content": long})}}})
	_, rec, err := run(t, a, Request{Model: "m", Messages: user("x")})
	if err != nil {
		t.Fatal(err)
	}
	e := rec.waitFor(t, func(e harness.Event) bool { return e.Name == harness.ToolCallStarted })
	got := e.Data["arguments"].(map[string]any)["content"].(string)
	if len(got) > ArgClip+len("…") || !strings.HasSuffix(got, "…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Fatalf("clipped content %d bytes: %q", len(got), got)
	}
	if b, _ := os.ReadFile(filepath.Join(a.Workspace(), "big.txt")); string(b) != long {
		t.Fatal("the file got the clipped content")
	}
}

func TestEditReadAndListTools(t *testing.T) {
	a, srv := setup(t, modeltest.Config{}, nil)
	ws := a.Workspace()
	os.MkdirAll(filepath.Join(ws, "src"), 0o755)
	os.WriteFile(filepath.Join(ws, "src", "main.go"), []byte("package main\n\nfunc main() {\n\tprintln(\"old\")\n}\n"), 0o600)
	os.WriteFile(filepath.Join(ws, "dup.txt"), []byte("x x\n"), 0o644)
	os.Symlink("src/main.go", filepath.Join(ws, "link"))
	calls := []modeltest.ToolCall{
		{Name: "edit_file", Arguments: args(map[string]string{"path": "src/main.go", "old_string": `println("old")`, "new_string": `println("new")`})},
		{Name: "edit_file", Arguments: args(map[string]string{"path": "dup.txt", "old_string": "x", "new_string": "y"})},
		{Name: "edit_file", Arguments: args(map[string]string{"path": "dup.txt", "old_string": "absent", "new_string": "y"})},
		{Name: "read_file", Arguments: args(map[string]any{"path": filepath.Join(ws, "src/main.go"), "offset": 4, "limit": 1})},
		{Name: "list_directory", Arguments: `{}`},
		{Name: "read_file", Arguments: args(map[string]string{"path": "missing.txt"})},
	}
	srv.Script(modeltest.Reply{ToolCalls: calls}, modeltest.Reply{Content: "ok"})
	_, rec, err := run(t, a, Request{Model: "m", Messages: user("x")})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(ws, "src", "main.go"))
	if !strings.Contains(string(b), `println("new")`) {
		t.Fatalf("edit not applied: %q", b)
	}
	if fi, _ := os.Stat(filepath.Join(ws, "src", "main.go")); fi.Mode().Perm() != 0o600 {
		t.Fatalf("edit changed the mode to %v", fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "dup.txt")); string(b) != "x x\n" {
		t.Fatalf("ambiguous edit applied: %q", b)
	}
	results := toolResults(srv.Requests()[1])
	if len(results) != 6 {
		t.Fatalf("results %q", results)
	}
	checks := []string{"edited ", "matches 2 places", "old_string not found", "\tprintln(\"new\")\n", "src/\n", "no such file"}
	for i, want := range checks {
		if !strings.Contains(results[i], want) {
			t.Errorf("result %d = %q, want it to contain %q", i, results[i], want)
		}
	}
	if results[3] != "\tprintln(\"new\")\n" {
		t.Errorf("ranged read %q", results[3])
	}
	if !strings.Contains(results[4], "dup.txt (4 bytes)") || !strings.Contains(results[4], "link -> src/main.go") || strings.Index(results[4], "src/") > strings.Index(results[4], "dup.txt") {
		t.Errorf("listing %q", results[4])
	}
	var outcomes []string
	for _, e := range rec.all() {
		switch e.Name {
		case harness.ToolCallCompleted:
			outcomes = append(outcomes, "ok")
		case harness.ToolCallFailed:
			if e.Data["error"] == "" {
				t.Errorf("failed without error: %v", e.Data)
			}
			outcomes = append(outcomes, "failed")
		}
	}
	if diff := cmp.Diff([]string{"ok", "failed", "failed", "ok", "ok", "failed"}, outcomes); diff != "" {
		t.Fatalf("outcomes (-want +got):\n%s", diff)
	}
}

func TestBadCallsFailAndTheRunContinues(t *testing.T) {
	a, srv := setup(t, modeltest.Config{}, nil)
	srv.Script(modeltest.Reply{ToolCalls: []modeltest.ToolCall{
		{Name: "no_such_tool", Arguments: `{}`},
		{Name: "shell", Arguments: `{"command": "echo hi"`},
	}}, modeltest.Reply{Content: "recovered"})
	out, rec, err := run(t, a, Request{Model: "m", Messages: user("x")})
	if err != nil || out.Output != "recovered" {
		t.Fatalf("%q %v", out.Output, err)
	}
	var failed []string
	for _, e := range rec.all() {
		if e.Name == harness.ToolCallFailed {
			failed = append(failed, e.Data["error"].(string))
		}
	}
	if len(failed) != 2 || !strings.Contains(failed[0], "unknown tool") || !strings.Contains(failed[1], "not a JSON object") {
		t.Fatalf("failed events %q", failed)
	}
	results := toolResults(srv.Requests()[1])
	if len(results) != 2 || !strings.HasPrefix(results[0], "Error: unknown tool") {
		t.Fatalf("results %q", results)
	}
}

func TestUsageIsSummedAndLastCallKept(t *testing.T) {
	a, srv := setup(t, modeltest.Config{}, nil)
	srv.Script(
		modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "list_directory", Arguments: `{}`}}, Usage: &modeltest.Usage{PromptTokens: 100, CompletionTokens: 10}},
		modeltest.Reply{Content: "done", Usage: &modeltest.Usage{PromptTokens: 150, CompletionTokens: 20}},
	)
	out, _, err := run(t, a, Request{Model: "m", Messages: user("x")})
	if err != nil {
		t.Fatal(err)
	}
	if out.Usage.Prompt != 250 || out.Usage.Completion != 30 || out.Last.Prompt != 150 || out.Last.Completion != 20 || out.Steps != 2 {
		t.Fatalf("usage %+v last %+v steps %d", out.Usage, out.Last, out.Steps)
	}
}

func TestStepCapEndsALoopingModel(t *testing.T) {
	loop := func(modeltest.Request) modeltest.Reply {
		return modeltest.Reply{Content: "again", ToolCalls: []modeltest.ToolCall{{Name: "list_directory", Arguments: `{}`}}}
	}
	a, srv := setup(t, modeltest.Config{Fallback: loop}, func(c *Config) { c.MaxSteps = 3 })
	out, rec, err := run(t, a, Request{Model: "m", Messages: user("x")})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()); n != 4 {
		t.Fatalf("%d model calls, want 3 steps and one final call", n)
	}
	started := 0
	for _, e := range rec.all() {
		if e.Name == harness.ToolCallStarted {
			started++
		}
	}
	if started != 3 || !strings.HasSuffix(out.Output, "[stopped: the step limit of 3 model calls was reached]") {
		t.Fatalf("started %d, output %q", started, out.Output)
	}
	// The trace stays replayable: the last assistant message has no
	// dangling tool calls.
	last := out.Trace[len(out.Trace)-1]
	if last.Role != "assistant" || len(last.ToolCalls) != 0 {
		t.Fatalf("last trace message %+v", last)
	}
	if !slices.Contains(srv.Requests()[3].ToolNames(), "shell") {
		t.Fatal("the final call should still describe the tools (tool_choice none)")
	}
}
