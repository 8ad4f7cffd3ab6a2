package harnesstest

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/svc-dev/svc/internal/gateway/gatewaytest"
	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/modeltest"
)

// testEvents: a streamed turn with reasoning and an answer.
func testEvents(t *testing.T, p Profile) {
	r := newRig(t, p)
	r.model.Script(turn(modeltest.Reply{
		Reasoning: "Let me think about it.", Content: "The answer is 42, with ünïcode.",
		Usage: &modeltest.Usage{PromptTokens: 1000, CompletionTokens: 20}, ChunkSize: 5,
	})...)
	_, s := r.Stream(map[string]any{"input": "What is the answer?"})
	evs := s.All()
	checkStream(t, evs)
	if got := text(evs, harness.ReasoningDelta); got != "Let me think about it." {
		t.Fatalf("reasoning deltas %q", got)
	}
	if got := text(evs, harness.OutputTextDelta); got != "The answer is 42, with ünïcode." {
		t.Fatalf("output deltas %q", got)
	}
	done := evs[len(evs)-1]
	if done.Name != "response.completed" || done.Data["output_text"] != "The answer is 42, with ünïcode." {
		t.Fatalf("terminal %v", done)
	}
	usage, _ := done.Data["usage"].(map[string]any)
	if usage["input_tokens"] != 1000.0 || usage["output_tokens"] != 20.0 {
		t.Fatalf("usage %v, want the model's 1000 in / 20 out", usage)
	}
	checkContext(t, p, done.Data["context"])
	reqs := turnRequests(r.model)
	if len(reqs) != 1 || !strings.Contains(reqs[0].LastUser(), "What is the answer?") {
		t.Fatalf("model saw %d turn requests; last user %q", len(reqs), reqs[len(reqs)-1].LastUser())
	}
}

// testJSON: a non-streaming turn gets its headers at once, whitespace
// ticks while it runs, and the response object at the end.
func testJSON(t *testing.T, p Profile) {
	r := newRig(t, p)
	hold := make(chan struct{})
	r.model.Script(turn(modeltest.Reply{Content: "held answer", Wait: hold})...)
	resp := r.Do("POST", "/v1/responses", map[string]any{"input": "take your time"})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	first := make([]byte, 1)
	if _, err := io.ReadFull(resp.Body, first); err != nil || strings.TrimSpace(string(first)) != "" {
		t.Fatalf("first byte %q, %v; want a whitespace tick", first, err)
	}
	close(hold)
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(append(first, rest...), &obj); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	if obj["status"] != "completed" || obj["output_text"] != "held answer" || obj["agent"] != p.ID ||
		obj["model"] != nil || obj["provider"] != nil || obj["error"] != nil || obj["metadata"] != nil {
		t.Fatalf("response %v", obj)
	}
	if id, _ := obj["id"].(string); !hex32.MatchString(id) {
		t.Fatalf("id %v", obj["id"])
	}
	if c, _ := obj["created"].(float64); c < 1e12 {
		t.Fatalf("created %v is not epoch ms", obj["created"])
	}
	checkContext(t, p, obj["context"])
}

// testToolCalls: the shell tool really runs and its output goes back to
// the model; the write-file tool writes the file.
func testToolCalls(t *testing.T, p Profile) {
	r := newRig(t, p)
	marker := fmt.Sprintf("conformance-%d", os.Getpid())
	replies := []modeltest.Reply{
		{ToolCalls: []modeltest.ToolCall{{Name: p.ShellTool, Arguments: p.ShellArgs("echo " + marker + "-$((6*7))")}}},
	}
	target := filepath.Join(r.home, "out", "héllo.txt")
	if p.WriteFileTool != "" {
		replies = append(replies, modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: p.WriteFileTool, Arguments: p.WriteFileArgs(target, "written by the agent")}}})
	}
	replies = append(replies, modeltest.Reply{Content: "Both tools ran."})
	r.model.Script(turn(replies...)...)

	_, s := r.Stream(map[string]any{"input": "use your tools"})
	evs := s.All()
	checkStream(t, evs)
	started, completed := -1, -1
	for i, ev := range evs {
		if ev.Data["tool"] == p.ShellTool && ev.Name == harness.ToolCallStarted && started < 0 {
			started = i
		}
		if ev.Data["tool"] == p.ShellTool && ev.Name == harness.ToolCallCompleted && completed < 0 {
			completed = i
		}
	}
	if started < 0 || completed < started {
		t.Fatalf("want tool_call.started then .completed for %s: %v", p.ShellTool, gatewaytest.Names(evs))
	}
	if last := evs[len(evs)-1]; last.Name != "response.completed" || !strings.HasSuffix(last.Data["output_text"].(string), "Both tools ran.") {
		t.Fatalf("terminal %v", last)
	}
	// The second model request carries the command's real output.
	reqs := turnRequests(r.model)
	if len(reqs) < 2 || !slices.ContainsFunc(reqs[1].Messages, func(m modeltest.Message) bool {
		return m.Role == "tool" && strings.Contains(m.Text(), marker+"-42")
	}) {
		t.Fatalf("the model never saw the shell output %s-42", marker)
	}
	if p.WriteFileTool != "" {
		resp := r.Do("GET", "/v1/files/content?path="+urlQuery(target), nil)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || string(b) != "written by the agent" {
			t.Fatalf("written file: %d %q", resp.StatusCode, b)
		}
	}
}

// testAttachments: files uploaded through the gateway reach the model as
// paths in the input.
func testAttachments(t *testing.T, p Profile) {
	r := newRig(t, p)
	path := filepath.Join(r.home, ".svc-gateway/workspace/notes.txt")
	if status, _ := r.Call("PUT", "/v1/files/content?path="+urlQuery(path), "attached notes"); status != 200 {
		t.Fatalf("upload: %d", status)
	}
	status, obj := r.Call("POST", "/v1/responses", map[string]any{"input": "read the attachment", "files": []string{path}})
	if status != 200 || obj["status"] != "completed" {
		t.Fatalf("turn: %d %v", status, obj)
	}
	reqs := turnRequests(r.model)
	if !strings.Contains(reqs[len(reqs)-1].LastUser(), path) {
		t.Fatalf("the model's input %q does not name %s", reqs[len(reqs)-1].LastUser(), path)
	}
	status, obj = r.Call("POST", "/v1/responses", map[string]any{"input": "x", "files": []string{path + ".missing"}})
	gatewaytest.WantError(t, status, obj, 400, "validation_error", "files")
}

// testFailedTurn: a failing model gives HTTP 200 with status failed, or
// response.failed on a stream.
func testFailedTurn(t *testing.T, p Profile) {
	r := newRig(t, p, withTurnReply(func(modeltest.Request) modeltest.Reply {
		return modeltest.Reply{Status: 401, ErrorType: "invalid_request_error", ErrorCode: "invalid_api_key", ErrorMessage: "Incorrect API key provided."}
	}))
	status, obj := r.Call("POST", "/v1/responses", map[string]any{"input": "hello"})
	if status != 200 || obj["status"] != "failed" || obj["context"] != nil {
		t.Fatalf("failed turn: %d %v", status, obj)
	}
	if e, _ := obj["error"].(map[string]any); e["code"] != "auth_error" || e["message"] == "" {
		t.Fatalf("error %v", obj["error"])
	}
	_, s := r.Stream(map[string]any{"input": "hello"})
	evs := s.All()
	checkStream(t, evs)
	if last := evs[len(evs)-1]; last.Name != "response.failed" {
		t.Fatalf("stream ended with %s", last.Name)
	}
}

// testModelErrors: model HTTP errors map to the spec's turn codes.
func testModelErrors(t *testing.T, p Profile) {
	ctxCode := p.ContextLengthCode
	if ctxCode == "" {
		ctxCode = "agent_error"
	}
	for _, c := range []struct {
		name  string
		reply modeltest.Reply
		code  string
	}{
		{"401", modeltest.Reply{Status: 401, ErrorType: "invalid_request_error", ErrorCode: "invalid_api_key", ErrorMessage: "bad key"}, "auth_error"},
		{"429", modeltest.Reply{Status: 429, ErrorType: "rate_limit_error", ErrorCode: "rate_limit_exceeded", ErrorMessage: "slow down"}, "rate_limited"},
		{"402", modeltest.Reply{Status: 402, ErrorType: "insufficient_quota", ErrorCode: "wallet_empty", ErrorMessage: "wallet balance is $0.00"}, "quota_exhausted"},
		{"context length", modeltest.Reply{Status: 400, ErrorType: "invalid_request_error", ErrorCode: "context_length_exceeded", ErrorMessage: "maximum context length exceeded"}, ctxCode},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, p, withTurnReply(func(modeltest.Request) modeltest.Reply { return c.reply }))
			status, obj := r.Call("POST", "/v1/responses", map[string]any{"input": "hello"})
			e, _ := obj["error"].(map[string]any)
			if status != 200 || obj["status"] != "failed" || e["code"] != c.code {
				t.Fatalf("%d %v; want failed with %s", status, obj, c.code)
			}
		})
	}
}

// testCancelMidTool: cancel while the shell tool sleeps; the turn settles
// cancelled, the stream ends with response.completed and the output so
// far, and the tool's process is gone.
func testCancelMidTool(t *testing.T, p Profile) {
	r := newRig(t, p)
	marker := fmt.Sprintf("sleep 297.%d", os.Getpid()%1000)
	r.model.Script(turn(modeltest.Reply{Content: "Starting the long job. ", ToolCalls: []modeltest.ToolCall{{Name: p.ShellTool, Arguments: p.ShellArgs(marker)}}})...)
	_, s := r.Stream(map[string]any{"input": "run the long job"})
	var evs []gatewaytest.Event
	for {
		ev, ok := s.Next()
		if !ok {
			t.Fatalf("stream ended before the tool started: %v", gatewaytest.Names(evs))
		}
		evs = append(evs, ev)
		if ev.Name == harness.ToolCallStarted && ev.Data["tool"] == p.ShellTool {
			break
		}
	}
	gatewaytest.Eventually(t, "the tool's process", func() bool { return len(processesWith(marker)) > 0 })
	id := evs[0].Data["id"].(string)
	status, ack := r.Call("POST", "/v1/responses/"+id+"/cancel", nil)
	if status != 200 || (ack["status"] != "in_progress" && ack["status"] != "cancelled") {
		t.Fatalf("cancel ack %d %v", status, ack)
	}
	evs = append(evs, s.All()...)
	checkStream(t, evs)
	last := evs[len(evs)-1]
	if last.Name != "response.completed" || last.Data["context"] != nil {
		t.Fatalf("cancelled stream ended with %v", last)
	}
	if so := text(evs, harness.OutputTextDelta); last.Data["output_text"] != so {
		t.Fatalf("output_text %q, want the output so far %q", last.Data["output_text"], so)
	}
	_, obj := r.Call("POST", "/v1/responses/"+id+"/cancel", nil)
	if obj["status"] != "cancelled" || obj["context"] != nil {
		t.Fatalf("settled %v", obj)
	}
	gatewaytest.Eventually(t, "the tool's process to be killed", func() bool { return len(processesWith(marker)) == 0 })
}

// testStopCommands: a stop command cancels without a run.
func testStopCommands(t *testing.T, p Profile) {
	if len(p.StopCommands) == 0 {
		t.Skip("the harness has no stop commands")
	}
	r := newRig(t, p)
	for _, cmd := range p.StopCommands {
		before := len(turnRequests(r.model))
		_, s := r.Stream(map[string]any{"input": cmd})
		evs := s.All()
		if fmt.Sprint(gatewaytest.Names(evs)) != "[response.created response.completed]" {
			t.Fatalf("%q: %v", cmd, gatewaytest.Names(evs))
		}
		d := evs[1].Data
		if d["output_text"] != "" || d["usage"] != nil || d["context"] != nil {
			t.Fatalf("%q: completed %v", cmd, d)
		}
		if len(turnRequests(r.model)) != before {
			t.Fatalf("%q reached the model", cmd)
		}
		_, obj := r.Call("POST", "/v1/responses/"+evs[0].Data["id"].(string)+"/cancel", nil)
		if obj["status"] != "cancelled" {
			t.Fatalf("%q: status %v", cmd, obj["status"])
		}
	}
}

// testEffortsAndEcho: every reasoning effort is accepted; model and
// provider are echoed as sent.
func testEffortsAndEcho(t *testing.T, p Profile) {
	r := newRig(t, p)
	for _, effort := range []string{"none", "minimal", "low", "medium", "high", "xhigh", "max", "ultra"} {
		status, obj := r.Call("POST", "/v1/responses", map[string]any{"input": "effort " + effort, "reasoning_effort": effort})
		if status != 200 || obj["status"] != "completed" {
			t.Fatalf("effort %s: %d %v", effort, status, obj)
		}
	}
	model := defaultModel(p)
	status, obj := r.Call("POST", "/v1/responses", map[string]any{"input": "x", "model": model, "provider": "scripted", "metadata": map[string]any{"k": "v"}})
	if status != 200 || obj["model"] != model || obj["provider"] != "scripted" || fmt.Sprint(obj["metadata"]) != "map[k:v]" {
		t.Fatalf("echo: %d %v", status, obj)
	}
}
