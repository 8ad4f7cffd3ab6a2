package harnesstest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/svc-dev/svc/internal/gateway/gatewaytest"
	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/modeltest"
)

var hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)

// nine are the spec's event names, identical across harnesses.
var nine = []string{
	"response.created", harness.ReasoningDelta, harness.OutputTextDelta,
	harness.ToolCallGenerating, harness.ToolCallStarted, harness.ToolCallCompleted,
	harness.ToolCallFailed, "response.completed", "response.failed",
}

// checkStream applies the stream rules every live stream obeys:
// response.created first with the ids, only the nine names, ids
// increasing, exactly one terminal event and it is last.
func checkStream(t *testing.T, evs []gatewaytest.Event) {
	t.Helper()
	if len(evs) < 2 || evs[0].Name != "response.created" {
		t.Fatalf("stream %v does not start with response.created", gatewaytest.Names(evs))
	}
	created := evs[0].Data
	if id, _ := created["id"].(string); !hex32.MatchString(id) {
		t.Fatalf("response.created id %v", created["id"])
	}
	if sid, _ := created["session_id"].(string); sid == "" {
		t.Fatalf("response.created session_id %v", created["session_id"])
	}
	terminals := 0
	for i, ev := range evs {
		if !slices.Contains(nine, ev.Name) {
			t.Fatalf("event %d is %q, not one of the nine", i, ev.Name)
		}
		if ev.Name == "response.completed" || ev.Name == "response.failed" {
			terminals++
		}
		checkPayload(t, ev)
	}
	last := evs[len(evs)-1].Name
	if terminals != 1 || (last != "response.completed" && last != "response.failed") {
		t.Fatalf("want exactly one terminal event, last: %v", gatewaytest.Names(evs))
	}
}

// checkPayload checks the required fields of each event's payload.
func checkPayload(t *testing.T, ev gatewaytest.Event) {
	t.Helper()
	d := ev.Data
	has := func(k string) bool { _, ok := d[k]; return ok }
	switch ev.Name {
	case harness.ReasoningDelta, harness.OutputTextDelta:
		if _, ok := d["text"].(string); !ok {
			t.Fatalf("%s without text: %v", ev.Name, d)
		}
	case harness.ToolCallGenerating, harness.ToolCallStarted, harness.ToolCallCompleted, harness.ToolCallFailed:
		if tool, _ := d["tool"].(string); tool == "" {
			t.Fatalf("%s without tool: %v", ev.Name, d)
		}
		if ev.Name == harness.ToolCallStarted && has("arguments") {
			if _, ok := d["arguments"].(map[string]any); !ok {
				t.Fatalf("tool_call.started arguments is not an object: %v", d)
			}
		}
	case "response.completed":
		if _, ok := d["output_text"].(string); !ok || !has("usage") || !has("context") {
			t.Fatalf("response.completed payload %v", d)
		}
	case "response.failed":
		e, _ := d["error"].(map[string]any)
		if code, _ := e["code"].(string); code == "" {
			t.Fatalf("response.failed payload %v", d)
		}
		if msg, _ := e["message"].(string); msg == "" {
			t.Fatalf("response.failed without message: %v", d)
		}
	}
}

// text concatenates the text of the events named name.
func text(evs []gatewaytest.Event, name string) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Name == name {
			b.WriteString(ev.Data["text"].(string))
		}
	}
	return b.String()
}

// checkContext applies the context rule of completed turns.
func checkContext(t *testing.T, p Profile, ctx any) {
	t.Helper()
	c, ok := ctx.(map[string]any)
	if !ok {
		t.Fatalf("completed turn has no context: %v", ctx)
	}
	used, _ := c["used_tokens"].(float64)
	window, _ := c["window_tokens"].(float64)
	if used <= 0 || window <= 0 || (p.ContextWindow != 0 && int64(window) != p.ContextWindow) {
		t.Fatalf("context %v (want window %d)", c, p.ContextWindow)
	}
}

// turnRequests are the recorded model requests of turns.
func turnRequests(m *modeltest.Server) []modeltest.Request {
	var out []modeltest.Request
	for _, r := range m.Requests() {
		if isTurn(r) {
			out = append(out, r)
		}
	}
	return out
}

// processesWith lists pids whose command line contains marker.
func processesWith(marker string) []string {
	var pids []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/cmdline")
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), marker) {
			pids = append(pids, filepath.Base(d))
		}
	}
	return pids
}

func defaultModel(p Profile) string {
	if len(p.Models) > 0 {
		return p.Models[0].ID
	}
	return "test-model"
}
