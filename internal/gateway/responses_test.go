package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-dev/svc/internal/harness"
)

var hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)

// spec's nine event names.
var nineEvents = []string{
	"response.created", "response.reasoning.delta", "response.output_text.delta",
	"response.tool_call.generating", "response.tool_call.started", "response.tool_call.completed",
	"response.tool_call.failed", "response.completed", "response.failed",
}

func TestJSONTurnSendsHeadersThenTicksThenBody(t *testing.T) {
	e := newEnv(t, testConfig(t))
	release := make(chan struct{})
	e.h.setRun(func(ctx context.Context, turn harness.Turn, emit func(harness.Event) error) (harness.Result, error) {
		<-release
		return echo(ctx, turn, emit)
	})
	// The response arrives while the turn is still held: headers are
	// flushed when the turn starts.
	resp := e.Do("POST", "/v1/responses", `{"input": "hi", "metadata": {"b": 1, "a": "x"}}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	id := resp.Header.Get("X-Svc-Response-Id")
	if !hex32.MatchString(id) {
		t.Fatalf("X-Svc-Response-Id %q", id)
	}
	one := make([]byte, 1)
	if _, err := io.ReadFull(resp.Body, one); err != nil || one[0] != ' ' {
		t.Fatalf("first byte %q, %v; want a whitespace tick", one, err)
	}
	close(release)
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(append(one, raw...), &obj); err != nil {
		t.Fatalf("body is not valid JSON: %v: %q", err, raw)
	}
	want := map[string]any{
		"id": id, "session_id": obj["session_id"], "status": "completed", "agent": "general-a",
		"model": nil, "provider": nil, "output_text": "echo: hi",
		"usage":    map[string]any{"input_tokens": 10.0, "output_tokens": 5.0, "cost_usd": nil},
		"context":  map[string]any{"used_tokens": 15.0, "window_tokens": 64000.0},
		"error":    nil,
		"metadata": map[string]any{"b": 1.0, "a": "x"},
		"created":  obj["created"],
	}
	if d := cmp.Diff(want, obj); d != "" {
		t.Fatalf("response object (-want +got):\n%s", d)
	}
	if !hex32.MatchString(obj["session_id"].(string)) {
		t.Fatalf("session_id %v", obj["session_id"])
	}
	if c, _ := obj["created"].(float64); c < 1e12 {
		t.Fatalf("created %v is not epoch milliseconds", obj["created"])
	}
	// Metadata is echoed verbatim: key order as sent.
	if !strings.Contains(string(raw), `"metadata":{"b":1,"a":"x"}`) {
		t.Fatalf("metadata not echoed verbatim: %s", raw)
	}
}

func TestStreamEventsInOrderWithOneTerminal(t *testing.T) {
	e := newEnv(t, testConfig(t))
	e.h.setRun(func(ctx context.Context, turn harness.Turn, emit func(harness.Event) error) (harness.Result, error) {
		emit(harness.Event{Name: harness.ReasoningDelta, Data: map[string]any{"text": "hmm"}})
		emit(harness.Event{Name: harness.ToolCallGenerating, Data: map[string]any{"tool": "terminal"}})
		emit(harness.Event{Name: harness.ToolCallStarted, Data: map[string]any{"tool": "terminal", "label": "ls", "arguments": map[string]any{"command": "ls"}}})
		emit(harness.Event{Name: harness.ToolCallCompleted, Data: map[string]any{"tool": "terminal", "duration_ms": 3}})
		emit(harness.Event{Name: harness.ToolCallFailed, Data: map[string]any{"tool": "web", "error": "offline"}})
		// Gateway-owned and unknown names from a harness are dropped.
		emit(harness.Event{Name: "response.completed", Data: map[string]any{"output_text": "fake"}})
		emit(harness.Event{Name: "response.custom", Data: nil})
		emit(harness.Event{Name: harness.OutputTextDelta, Data: map[string]any{"text": "héllo "}})
		emit(harness.Event{Name: harness.OutputTextDelta, Data: map[string]any{"text": "wörld"}})
		return harness.Result{OutputText: "héllo wörld", Usage: &harness.Usage{InputTokens: 7, OutputTokens: 2}}, nil
	})
	resp, sse := e.Stream(map[string]any{"input": "go", "model": "m2", "provider": "p"})
	evs := sse.All()
	got := names(evs)
	want := []string{"response.created", "response.reasoning.delta", "response.tool_call.generating",
		"response.tool_call.started", "response.tool_call.completed", "response.tool_call.failed",
		"response.output_text.delta", "response.output_text.delta", "response.completed"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}
	for i, ev := range evs {
		if ev.ID != strconv.Itoa(i+1) {
			t.Fatalf("event %d has id %q", i, ev.ID)
		}
		if !slices.Contains(nineEvents, ev.Name) {
			t.Fatalf("event name %q is not one of the nine", ev.Name)
		}
	}
	created := evs[0].Data
	if created["id"] != resp.Header.Get("X-Svc-Response-Id") || !hex32.MatchString(created["session_id"].(string)) || len(created) != 2 {
		t.Fatalf("response.created payload %v", created)
	}
	if d := cmp.Diff(map[string]any{"tool": "terminal", "label": "ls", "arguments": map[string]any{"command": "ls"}}, evs[3].Data); d != "" {
		t.Fatalf("tool_call.started payload: %s", d)
	}
	// m2 has no window in the catalog: 128000.
	wantDone := map[string]any{"output_text": "héllo wörld",
		"usage":   map[string]any{"input_tokens": 7.0, "output_tokens": 2.0, "cost_usd": nil},
		"context": map[string]any{"used_tokens": 9.0, "window_tokens": 128000.0}}
	if d := cmp.Diff(wantDone, evs[len(evs)-1].Data); d != "" {
		t.Fatalf("response.completed payload (-want +got):\n%s", d)
	}
	// The harness got the model and provider as sent; the record echoes them.
	if turn := e.h.lastTurn(); turn.Model != "m2" || turn.Provider != "p" || !turn.NewSession {
		t.Fatalf("turn %+v", turn)
	}
	_, obj := e.Call("POST", "/v1/responses/"+created["id"].(string)+"/cancel", nil)
	if obj["model"] != "m2" || obj["provider"] != "p" || obj["status"] != "completed" {
		t.Fatalf("record %v", obj)
	}
}

func TestFailedTurnsAreHTTP200(t *testing.T) {
	cases := []struct {
		name     string
		err      error
		panics   bool
		wantCode string
		wantHint string
	}{
		{"harness code", &harness.Error{Code: "rate_limited", Message: "slow down", Hint: "retry later"}, false, "rate_limited", "retry later"},
		{"plain error", errors.New("model endpoint unreachable"), false, "agent_error", ""},
		{"panic", nil, true, "agent_error", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, testConfig(t))
			e.h.setRun(func(ctx context.Context, turn harness.Turn, emit func(harness.Event) error) (harness.Result, error) {
				emit(harness.Event{Name: harness.OutputTextDelta, Data: map[string]any{"text": "part"}})
				if c.panics {
					panic("boom")
				}
				return harness.Result{}, c.err
			})
			status, obj := e.Call("POST", "/v1/responses", map[string]any{"input": "x"})
			if status != 200 || obj["status"] != "failed" {
				t.Fatalf("status %d, %v", status, obj)
			}
			errObj := obj["error"].(map[string]any)
			if errObj["code"] != c.wantCode || errObj["message"] == "" {
				t.Fatalf("error %v", errObj)
			}
			if h, _ := errObj["hint"].(string); h != c.wantHint {
				t.Fatalf("hint %q", h)
			}
			if obj["context"] != nil {
				t.Fatalf("failed turn has a context: %v", obj["context"])
			}

			_, sse := e.Stream(map[string]any{"input": "x"})
			evs := sse.All()
			if d := cmp.Diff([]string{"response.created", "response.output_text.delta", "response.failed"}, names(evs)); d != "" {
				t.Fatalf("events: %s", d)
			}
			if got := evs[2].Data["error"].(map[string]any)["code"]; got != c.wantCode {
				t.Fatalf("response.failed code %v", got)
			}
		})
	}
}

func TestAgentRouting(t *testing.T) {
	b := newScriptHarness(harness.GeneralB)
	b.setRun(func(ctx context.Context, turn harness.Turn, emit func(harness.Event) error) (harness.Result, error) {
		return harness.Result{OutputText: "from b"}, nil
	})
	e := newEnv(t, testConfig(t), b)

	_, obj := e.Call("POST", "/v1/responses", map[string]any{"input": "x", "agent": "general-b"})
	if obj["agent"] != "general-b" || obj["output_text"] != "from b" || obj["status"] != "completed" {
		t.Fatalf("general-b turn %v", obj)
	}
	// b reports no usage, so no context can be derived.
	if obj["context"] != nil || obj["usage"] != nil {
		t.Fatalf("context %v usage %v", obj["context"], obj["usage"])
	}
	_, obj = e.Call("POST", "/v1/responses", map[string]any{"input": "x", "agent": ""})
	if obj["agent"] != "general-a" {
		t.Fatalf("empty agent went to %v", obj["agent"])
	}

	// A valid but unprovisioned harness: a failed turn, not an HTTP error.
	status, obj := e.Call("POST", "/v1/responses", map[string]any{"input": "x", "agent": "coding-c"})
	if status != 200 || obj["status"] != "failed" || obj["agent"] != "coding-c" || obj["error"].(map[string]any)["code"] != "agent_unavailable" {
		t.Fatalf("unprovisioned: %d %v", status, obj)
	}
	_, sse := e.Stream(map[string]any{"input": "x", "agent": "coding-c"})
	evs := sse.All()
	if d := cmp.Diff([]string{"response.created", "response.failed"}, names(evs)); d != "" {
		t.Fatalf("unprovisioned stream: %s", d)
	}

	status, obj = e.Call("POST", "/v1/responses", map[string]any{"input": "x", "agent": "general-z"})
	wantError(t, status, obj, 400, "validation_error", "agent")
}

func TestRequestValidation(t *testing.T) {
	e := newEnv(t, testConfig(t))
	file := filepath.Join(e.home, "notes.txt")
	os.WriteFile(file, []byte("n"), 0o644)
	meta17 := map[string]any{}
	for i := range 17 {
		meta17[fmt.Sprint("k", i)] = i
	}
	cases := []struct {
		name  string
		body  any
		param string
	}{
		{"malformed JSON", `{"input":`, ""},
		{"not an object", `["input"]`, ""},
		{"trailing garbage", `{"input":"x"} x`, ""},
		{"missing input", map[string]any{"stream": false}, "input"},
		{"empty input", map[string]any{"input": ""}, "input"},
		{"input not a string", map[string]any{"input": 3}, "input"},
		{"mode goal", map[string]any{"input": "x", "mode": "goal"}, "mode"},
		{"mode unknown", map[string]any{"input": "x", "mode": "plan"}, "mode"},
		{"effort unknown", map[string]any{"input": "x", "reasoning_effort": "extreme"}, "reasoning_effort"},
		{"stream not boolean", map[string]any{"input": "x", "stream": "yes"}, "stream"},
		{"model not string", map[string]any{"input": "x", "model": 1}, "model"},
		{"metadata 17 pairs", map[string]any{"input": "x", "metadata": meta17}, "metadata"},
		{"metadata over 64 KB", map[string]any{"input": "x", "metadata": map[string]any{"k": strings.Repeat("a", 64<<10)}}, "metadata"},
		{"metadata not object", map[string]any{"input": "x", "metadata": []any{1}}, "metadata"},
		{"files not array", map[string]any{"input": "x", "files": "a"}, "files"},
		{"files missing", map[string]any{"input": "x", "files": []string{file, filepath.Join(e.home, "nope")}}, "files"},
		{"files directory", map[string]any{"input": "x", "files": []string{e.home}}, "files"},
		{"files relative", map[string]any{"input": "x", "files": []string{"notes.txt"}}, "files"},
		{"session id with slash", map[string]any{"input": "x", "session_id": "../etc"}, "session_id"},
		{"agent unknown", map[string]any{"input": "x", "agent": "hermes"}, "agent"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, obj := e.Call("POST", "/v1/responses", c.body)
			wantError(t, status, obj, 400, "validation_error", c.param)
		})
	}

	t.Run("body over 2 MB", func(t *testing.T) {
		big := `{"input":"` + strings.Repeat("a", 2<<20) + `"}`
		status, obj := e.Call("POST", "/v1/responses", big)
		wantError(t, status, obj, 413, "payload_too_large", "")
	})

	t.Run("accepted", func(t *testing.T) {
		// 16 pairs at exactly the cap, every effort, instance_id of any
		// type, unknown fields, ~/ files: all accepted.
		meta16 := map[string]any{}
		for i := range 16 {
			meta16[fmt.Sprint("k", i)] = i
		}
		for _, effort := range efforts {
			status, obj := e.Call("POST", "/v1/responses", map[string]any{
				"input": "x", "reasoning_effort": effort, "instance_id": map[string]any{"any": true},
				"future_field": 1, "metadata": meta16, "files": []string{"~/notes.txt"}, "mode": "chat",
			})
			if status != 200 || obj["status"] != "completed" {
				t.Fatalf("effort %s: %d %v", effort, status, obj)
			}
			if got := e.h.lastTurn(); got.ReasoningEffort != effort || !slices.Equal(got.Files, []string{file}) {
				t.Fatalf("turn %+v", got)
			}
		}
	})
}

func TestSessionIDs(t *testing.T) {
	e := newEnv(t, testConfig(t))
	_, first := e.Call("POST", "/v1/responses", map[string]any{"input": "one"})
	sid := first["session_id"].(string)
	if !hex32.MatchString(sid) || !hex32.MatchString(first["id"].(string)) || sid == first["id"] {
		t.Fatalf("ids %v %v", sid, first["id"])
	}
	_, second := e.Call("POST", "/v1/responses", map[string]any{"input": "two", "session_id": sid})
	if second["session_id"] != sid || e.h.lastTurn().NewSession {
		t.Fatalf("continued turn %v / %+v", second, e.h.lastTurn())
	}
	// An unseen id starts a thread under that id.
	_, third := e.Call("POST", "/v1/responses", map[string]any{"input": "three", "session_id": "my-thread_1"})
	if third["session_id"] != "my-thread_1" {
		t.Fatalf("unseen id: %v", third)
	}
}

func TestHarnessMintedSessionID(t *testing.T) {
	e := newEnv(t, testConfig(t))
	e.h.setRun(func(ctx context.Context, turn harness.Turn, emit func(harness.Event) error) (harness.Result, error) {
		return harness.Result{OutputText: "ok", SessionID: "minted-by-harness"}, nil
	})
	_, obj := e.Call("POST", "/v1/responses", map[string]any{"input": "x"})
	if obj["session_id"] != "minted-by-harness" {
		t.Fatalf("session_id %v", obj["session_id"])
	}
}

// issuingHarness mints its own session ids, like coding-b.
type issuingHarness struct {
	*scriptHarness
}

func (h issuingHarness) Issued(ctx context.Context, id string) (bool, error) {
	return id == "issued-1", nil
}

func TestSessionIssuer(t *testing.T) {
	e := newEnv(t, testConfig(t), issuingHarness{newScriptHarness(harness.CodingB)})
	status, body := e.Call("POST", "/v1/responses", map[string]any{"input": "x", "agent": "coding-b", "session_id": "made-up"})
	wantError(t, status, body, 400, "validation_error", "session_id")
	for _, sid := range []string{"issued-1", ""} {
		if _, obj := e.Call("POST", "/v1/responses", map[string]any{"input": "x", "agent": "coding-b", "session_id": sid}); obj["status"] != "completed" {
			t.Fatalf("session %q: %v", sid, obj)
		}
	}
}

func TestStopCommandSettlesCancelled(t *testing.T) {
	e := newEnv(t, testConfig(t))
	e.h.setRun(func(ctx context.Context, turn harness.Turn, emit func(harness.Event) error) (harness.Result, error) {
		return harness.Result{Usage: &harness.Usage{InputTokens: 1}}, harness.ErrStopped
	})
	_, sse := e.Stream(map[string]any{"input": "stop"})
	evs := sse.All()
	if d := cmp.Diff([]string{"response.created", "response.completed"}, names(evs)); d != "" {
		t.Fatal(d)
	}
	if d := cmp.Diff(map[string]any{"output_text": "", "usage": nil, "context": nil}, evs[1].Data); d != "" {
		t.Fatalf("completed payload: %s", d)
	}
	_, obj := e.Call("POST", "/v1/responses/"+evs[0].Data["id"].(string)+"/cancel", nil)
	if obj["status"] != "cancelled" || obj["usage"] != nil {
		t.Fatalf("record %v", obj)
	}
}
