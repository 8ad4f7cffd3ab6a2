package harnesstest

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-dev/svc/internal/gateway"
	"github.com/svc-dev/svc/internal/gateway/gatewaytest"
	"github.com/svc-dev/svc/internal/modeltest"
)

func urlQuery(s string) string { return url.QueryEscape(s) }

// testSessionBusy: one turn per session; the busy error names it.
func testSessionBusy(t *testing.T, p Profile) {
	r := newRig(t, p)
	hold := make(chan struct{})
	r.model.Script(turn(modeltest.Reply{Content: "busy answer", Wait: hold})...)
	_, s := r.Stream(map[string]any{"input": "first"})
	created, _ := s.Next()
	id, sid := created.Data["id"].(string), created.Data["session_id"].(string)

	status, body := r.Call("POST", "/v1/responses", map[string]any{"input": "second", "session_id": sid})
	gatewaytest.WantError(t, status, body, 409, "session_busy", "")
	if got := body["error"].(map[string]any)["response_id"]; got != id {
		t.Fatalf("response_id %v, want %s", got, id)
	}
	_, read := r.Call("GET", "/v1/sessions/"+sid, nil)
	if read["active_response_id"] != id {
		t.Fatalf("active_response_id %v", read["active_response_id"])
	}
	close(hold)
	s.Until("response.completed")
	_, read = r.Call("GET", "/v1/sessions/"+sid, nil)
	if read["active_response_id"] != nil {
		t.Fatalf("active_response_id after the turn: %v", read["active_response_id"])
	}
}

// testReplay: a client that drops misses nothing: the replay has the same
// events with the same ids, then the rest live.
func testReplay(t *testing.T, p Profile) {
	r := newRig(t, p)
	hold := make(chan struct{})
	// A tool call first: every harness reports it, so the first client
	// has seen events beyond response.created when it drops.
	r.model.Script(turn(
		modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: p.ShellTool, Arguments: p.ShellArgs("echo before the pause")}}},
		modeltest.Reply{Content: "after the pause", Wait: hold},
	)...)
	resp, s := r.Stream(map[string]any{"input": "reconnect"})
	seen := s.Until("response.tool_call.completed")
	resp.Body.Close() // the client drops; the turn goes on

	live := r.Do("GET", "/v1/responses/"+seen[0].Data["id"].(string)+"/stream", nil)
	again := gatewaytest.NewStream(t, live.Body)
	var replayed []gatewaytest.Event
	for range seen {
		ev, ok := again.Next()
		if !ok {
			t.Fatal("replay ended early")
		}
		replayed = append(replayed, ev)
	}
	if d := cmp.Diff(seen, replayed); d != "" {
		t.Fatalf("replay differs from what the first client saw (-first +replay):\n%s", d)
	}
	close(hold)
	all := append(replayed, again.All()...)
	checkStream(t, all)
	if got := text(all, "response.output_text.delta"); got != "after the pause" {
		t.Fatalf("output %q", got)
	}
}

// testLastEventID: a reconnect with Last-Event-ID gets exactly the events
// after it.
func testLastEventID(t *testing.T, p Profile) {
	r := newRig(t, p)
	r.model.Script(turn(modeltest.Reply{Reasoning: "a b c", Content: "one two three four", ChunkSize: 4})...)
	_, s := r.Stream(map[string]any{"input": "ids"})
	all := s.All()
	checkStream(t, all)
	id := all[0].Data["id"].(string)
	for k := 1; k < len(all); k++ {
		got := r.Replay(id, "Last-Event-ID", all[k-1].ID)
		if d := cmp.Diff(all[k:], got); d != "" {
			t.Fatalf("after id %s (-want +got):\n%s", all[k-1].ID, d)
		}
	}
}

// testSynthesizedReplay: after the buffer expires the replay is created,
// one delta with the whole text, and the terminal event.
func testSynthesizedReplay(t *testing.T, p Profile) {
	r := newRig(t, p, withConfig(func(c *gateway.Config) { c.BufferTTL = 30 * time.Millisecond }))
	r.model.Script(turn(modeltest.Reply{Reasoning: "not kept", Content: "the full text, in pieces", ChunkSize: 3})...)
	_, s := r.Stream(map[string]any{"input": "synthesize"})
	live := s.All()
	id := live[0].Data["id"].(string)
	var got []gatewaytest.Event
	gatewaytest.Eventually(t, "the synthesized replay", func() bool {
		got = r.Replay(id)
		return len(got) == 3
	})
	terminal := live[len(live)-1]
	want := []gatewaytest.Event{
		live[0],
		{Name: "response.output_text.delta", Data: map[string]any{"text": terminal.Data["output_text"]}},
		terminal,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("synthesized replay (-want +got):\n%s", d)
	}
}

// testRecordExpiry: an expired record is 404 response_not_found.
func testRecordExpiry(t *testing.T, p Profile) {
	r := newRig(t, p, withConfig(func(c *gateway.Config) { c.RecordTTL = 30 * time.Millisecond }))
	_, obj := r.Call("POST", "/v1/responses", map[string]any{"input": "expire"})
	id := obj["id"].(string)
	gatewaytest.Eventually(t, "the record to expire", func() bool {
		resp := r.Do("GET", "/v1/responses/"+id+"/stream", nil)
		resp.Body.Close()
		return resp.StatusCode == 404
	})
	for _, call := range []string{"GET /v1/responses/" + id + "/stream", "POST /v1/responses/" + id + "/cancel"} {
		method, path, _ := strings.Cut(call, " ")
		status, body := r.Call(method, path, nil)
		gatewaytest.WantError(t, status, body, 404, "response_not_found", "")
	}
}

// testLimits: the request limits of the spec.
func testLimits(t *testing.T, p Profile) {
	r := newRig(t, p)
	big := `{"input":"` + strings.Repeat("a", 2<<20) + `"}`
	status, body := r.Call("POST", "/v1/responses", big)
	gatewaytest.WantError(t, status, body, 413, "payload_too_large", "")

	meta := map[string]any{}
	for i := range 17 {
		meta[strconv.Itoa(i)] = i
	}
	for _, c := range []struct {
		body  map[string]any
		param string
	}{
		{map[string]any{"input": "x", "metadata": meta}, "metadata"},
		{map[string]any{"input": "x", "metadata": map[string]any{"k": strings.Repeat("v", 64<<10)}}, "metadata"},
		{map[string]any{"input": "x", "mode": "goal"}, "mode"},
		{map[string]any{"input": "x", "agent": "no-such-agent"}, "agent"},
		{map[string]any{"input": "x", "reasoning_effort": "maximum"}, "reasoning_effort"},
		{map[string]any{"stream": true}, "input"},
	} {
		status, body := r.Call("POST", "/v1/responses", c.body)
		gatewaytest.WantError(t, status, body, 400, "validation_error", c.param)
	}
	// At the limits, and verbatim.
	delete(meta, "16")
	status, obj := r.Call("POST", "/v1/responses", `{"input":"x","metadata":{"z":1,"a":[true,null]},"instance_id":"ignored"}`)
	if status != 200 || fmt.Sprint(obj["metadata"]) != "map[a:[true <nil>] z:1]" {
		t.Fatalf("metadata echo: %d %v", status, obj)
	}
	if status, obj := r.Call("POST", "/v1/responses", map[string]any{"input": "x", "metadata": meta}); status != 200 || obj["status"] != "completed" {
		t.Fatalf("16 pairs: %d %v", status, obj)
	}
}
