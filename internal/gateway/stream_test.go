package gateway

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-dev/svc/internal/gateway/gatewaytest"
	"github.com/svc-dev/svc/internal/harness"
)

// holdRun is a turn that emits a delta, then waits for release (or its
// context), then finishes.
func holdRun(release <-chan struct{}) func(context.Context, harness.Turn, func(harness.Event) error) (harness.Result, error) {
	return func(ctx context.Context, turn harness.Turn, emit func(harness.Event) error) (harness.Result, error) {
		emit(harness.Event{Name: harness.OutputTextDelta, Data: map[string]any{"text": "first "}})
		select {
		case <-release:
		case <-ctx.Done():
			return harness.Result{OutputText: "first "}, ctx.Err()
		}
		emit(harness.Event{Name: harness.OutputTextDelta, Data: map[string]any{"text": "second"}})
		return harness.Result{OutputText: "first second", Usage: &harness.Usage{InputTokens: 3, OutputTokens: 2, Model: "m1"}}, nil
	}
}

func TestSessionBusy(t *testing.T) {
	e := newEnv(t, testConfig(t))
	release := make(chan struct{})
	e.h.setRun(holdRun(release))
	_, sse := e.Stream(map[string]any{"input": "x", "session_id": "s1"})
	created, _ := sse.Next()
	id := created.Data["id"].(string)

	status, obj := e.Call("POST", "/v1/responses", map[string]any{"input": "again", "session_id": "s1"})
	wantError(t, status, obj, 409, "session_busy", "")
	if obj["error"].(map[string]any)["response_id"] != id {
		t.Fatalf("session_busy response_id %v, want %s", obj["error"], id)
	}
	_, read := e.Call("GET", "/v1/sessions/s1", nil)
	if read["active_response_id"] != id {
		t.Fatalf("active_response_id %v", read["active_response_id"])
	}
	// Another session, and the same id on another harness, run freely.
	e.h.setRun(echo)
	if _, obj := e.Call("POST", "/v1/responses", map[string]any{"input": "y", "session_id": "s2"}); obj["status"] != "completed" {
		t.Fatalf("other session: %v", obj)
	}
	if _, obj := e.Call("POST", "/v1/responses", map[string]any{"input": "y", "session_id": "s1", "agent": "general-b"}); obj["status"] != "failed" {
		t.Fatalf("other harness: %v", obj)
	}

	close(release)
	for {
		ev, ok := sse.Next()
		if !ok {
			t.Fatal("stream ended without a terminal event")
		}
		if ev.Name == "response.completed" {
			break
		}
	}
	// Right after the terminal event the session takes the next turn.
	_, read = e.Call("GET", "/v1/sessions/s1", nil)
	if read["active_response_id"] != nil {
		t.Fatalf("active_response_id after the turn: %v", read["active_response_id"])
	}
	if _, obj := e.Call("POST", "/v1/responses", map[string]any{"input": "next", "session_id": "s1"}); obj["status"] != "completed" {
		t.Fatalf("next turn: %v", obj)
	}
}

func TestCancelMidTurn(t *testing.T) {
	e := newEnv(t, testConfig(t))
	unwind := make(chan struct{})
	sawCancel := make(chan struct{})
	e.h.setRun(func(ctx context.Context, turn harness.Turn, emit func(harness.Event) error) (harness.Result, error) {
		emit(harness.Event{Name: harness.ToolCallStarted, Data: map[string]any{"tool": "terminal"}})
		emit(harness.Event{Name: harness.OutputTextDelta, Data: map[string]any{"text": "so far"}})
		<-ctx.Done()
		close(sawCancel)
		<-unwind // hold the unwinding so the ack is observed first
		return harness.Result{Usage: &harness.Usage{InputTokens: 4, OutputTokens: 1, Model: "m1"}}, fmt.Errorf("tool interrupted: %w", ctx.Err())
	})
	_, sse := e.Stream(map[string]any{"input": "long job"})
	created, _ := sse.Next()
	id := created.Data["id"].(string)
	sse.Next() // tool_call.started
	sse.Next() // the delta: the turn is running

	status, ack := e.Call("POST", "/v1/responses/"+id+"/cancel", nil)
	if status != 200 || ack["status"] != "in_progress" || ack["output_text"] != "so far" {
		t.Fatalf("cancel ack %d %v", status, ack)
	}
	<-sawCancel
	close(unwind)
	rest := sse.All()
	if d := cmp.Diff([]string{"response.completed"}, names(rest)); d != "" {
		t.Fatalf("after cancel: %s", d)
	}
	done := rest[0].Data
	if done["output_text"] != "so far" || done["context"] != nil {
		t.Fatalf("completed payload %v", done)
	}
	// Cancel of a settled response is a no-op returning it.
	_, obj := e.Call("POST", "/v1/responses/"+id+"/cancel", nil)
	if obj["status"] != "cancelled" || obj["output_text"] != "so far" || obj["context"] != nil || obj["error"] != nil {
		t.Fatalf("settled record %v", obj)
	}
	_, again := e.Call("POST", "/v1/responses/"+id+"/cancel", nil)
	if d := cmp.Diff(obj, again); d != "" {
		t.Fatalf("second cancel changed the record: %s", d)
	}
	// The session is free again.
	if _, read := e.Call("GET", "/v1/sessions/"+created.Data["session_id"].(string), nil); read["active_response_id"] != nil {
		t.Fatalf("still active: %v", read)
	}
}

func TestCancelUnknownResponse(t *testing.T) {
	e := newEnv(t, testConfig(t))
	status, obj := e.Call("POST", "/v1/responses/0123456789abcdef0123456789abcdef/cancel", nil)
	wantError(t, status, obj, 404, "response_not_found", "")
	status, obj = e.Call("GET", "/v1/responses/0123456789abcdef0123456789abcdef/stream", nil)
	wantError(t, status, obj, 404, "response_not_found", "")
}

func TestDroppedClientDoesNotStopTheTurn(t *testing.T) {
	e := newEnv(t, testConfig(t))
	release := make(chan struct{})
	e.h.setRun(holdRun(release))
	resp, sse := e.Stream(map[string]any{"input": "x"})
	created, _ := sse.Next()
	first, _ := sse.Next()
	resp.Body.Close()
	close(release)

	// The replay has what the first client saw, with the same ids, and the
	// rest of the run through the terminal event.
	evs := e.Replay(created.Data["id"].(string))
	if d := cmp.Diff([]sseEvent{created, first}, evs[:2]); d != "" {
		t.Fatalf("replay prefix: %s", d)
	}
	if d := cmp.Diff([]string{"response.created", "response.output_text.delta", "response.output_text.delta", "response.completed"}, names(evs)); d != "" {
		t.Fatal(d)
	}
	if evs[3].Data["output_text"] != "first second" {
		t.Fatalf("completed %v", evs[3].Data)
	}
}

func TestReplayAttachesLive(t *testing.T) {
	e := newEnv(t, testConfig(t))
	release := make(chan struct{})
	e.h.setRun(holdRun(release))
	_, sse := e.Stream(map[string]any{"input": "x"})
	created, _ := sse.Next()
	id := created.Data["id"].(string)
	sse.Next()

	resp := e.Do("GET", "/v1/responses/"+id+"/stream", nil)
	live := gatewaytest.NewStream(t, resp.Body)
	a, _ := live.Next()
	b, _ := live.Next()
	if a.Name != "response.created" || b.Name != "response.output_text.delta" || b.ID != "2" {
		t.Fatalf("replayed %v %v", a, b)
	}
	close(release)
	rest := live.All()
	if d := cmp.Diff([]string{"response.output_text.delta", "response.completed"}, names(rest)); d != "" {
		t.Fatalf("live part: %s", d)
	}
}

func TestLastEventIDResumes(t *testing.T) {
	e := newEnv(t, testConfig(t))
	_, sse := e.Stream(map[string]any{"input": "hello"})
	all := sse.All()
	id := all[0].Data["id"].(string)
	for k := 0; k <= len(all); k++ {
		got := e.Replay(id, "Last-Event-ID", strconv.Itoa(k))
		if d := cmp.Diff(all[k:], got, cmpEmpty); d != "" {
			t.Fatalf("Last-Event-ID %d (-want +got):\n%s", k, d)
		}
	}
	// An unparsable id replays everything.
	if d := cmp.Diff(all, e.Replay(id, "Last-Event-ID", "nope")); d != "" {
		t.Fatal(d)
	}
}

var cmpEmpty = cmp.Comparer(func(a, b []sseEvent) bool { return len(a) == 0 && len(b) == 0 || cmp.Equal(a, b) })

func TestSynthesizedReplayAfterBufferExpiry(t *testing.T) {
	cfg := testConfig(t)
	cfg.BufferTTL = 20 * time.Millisecond
	e := newEnv(t, cfg)
	_, sse := e.Stream(map[string]any{"input": "hello"})
	live := sse.All()
	id := live[0].Data["id"].(string)
	terminal := live[len(live)-1]

	var got []sseEvent
	eventually(t, "the synthesized replay", func() bool {
		got = e.Replay(id)
		return len(got) == 3
	})
	want := []sseEvent{
		live[0],
		{Name: "response.output_text.delta", Data: map[string]any{"text": "echo: hello"}},
		terminal,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("synthesized replay (-want +got):\n%s", d)
	}
	// Resuming after created skips it; after the terminal event, nothing.
	if d := cmp.Diff(want[1:], e.Replay(id, "Last-Event-ID", "1")); d != "" {
		t.Fatal(d)
	}
	if got := e.Replay(id, "Last-Event-ID", terminal.ID); len(got) != 0 {
		t.Fatalf("after the terminal id: %v", got)
	}

	// A turn with no text synthesizes no delta; a failed one ends failed.
	e.h.setRun(func(ctx context.Context, turn harness.Turn, emit func(harness.Event) error) (harness.Result, error) {
		emit(harness.Event{Name: harness.ToolCallStarted, Data: map[string]any{"tool": "t"}})
		return harness.Result{}, harness.Errorf("auth_error", "connect an account")
	})
	_, sse = e.Stream(map[string]any{"input": "x"})
	failed := sse.All()
	eventually(t, "the synthesized failed replay", func() bool {
		got = e.Replay(failed[0].Data["id"].(string))
		return len(got) == 2
	})
	if d := cmp.Diff([]sseEvent{failed[0], failed[len(failed)-1]}, got); d != "" {
		t.Fatal(d)
	}
}

func TestRecordExpiry(t *testing.T) {
	cfg := testConfig(t)
	cfg.RecordTTL = 20 * time.Millisecond
	e := newEnv(t, cfg)
	_, obj := e.Call("POST", "/v1/responses", map[string]any{"input": "x"})
	id := obj["id"].(string)
	eventually(t, "the record to expire", func() bool {
		status, _ := e.Call("POST", "/v1/responses/"+id+"/cancel", nil)
		return status == 404
	})
	status, body := e.Call("GET", "/v1/responses/"+id+"/stream", nil)
	wantError(t, status, body, 404, "response_not_found", "")
}

func TestRecordCap(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxRecords = 3
	e := newEnv(t, cfg)
	var ids []string
	for i := range 4 {
		_, obj := e.Call("POST", "/v1/responses", map[string]any{"input": fmt.Sprint(i)})
		ids = append(ids, obj["id"].(string))
	}
	if status, _ := e.Call("POST", "/v1/responses/"+ids[0]+"/cancel", nil); status != 404 {
		t.Fatalf("oldest record still there: %d", status)
	}
	for _, id := range ids[1:] {
		if status, _ := e.Call("POST", "/v1/responses/"+id+"/cancel", nil); status != 200 {
			t.Fatalf("record %s dropped: %d", id, status)
		}
	}

	// Running records are never dropped, even past the cap.
	release := make(chan struct{})
	defer close(release)
	e.h.setRun(holdRun(release))
	var running []string
	for i := range 4 {
		_, sse := e.Stream(map[string]any{"input": "x", "session_id": fmt.Sprint("run", i)})
		ev, _ := sse.Next()
		running = append(running, ev.Data["id"].(string))
	}
	for _, id := range running {
		resp := e.Do("GET", "/v1/responses/"+id+"/stream", nil, "Last-Event-ID", "1")
		if resp.StatusCode != 200 {
			t.Fatalf("running record %s dropped", id)
		}
		resp.Body.Close()
	}
}

// TestBufferCap: past MaxEvents buffering stops, so a replay ends without
// the terminal event, while a live client that keeps up gets everything.
func TestBufferCap(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxEvents = 10
	cfg.TailEvents = 4
	e := newEnv(t, cfg)
	step := make(chan struct{})
	const deltas = 30
	e.h.setRun(func(ctx context.Context, turn harness.Turn, emit func(harness.Event) error) (harness.Result, error) {
		for i := range deltas {
			<-step
			emit(harness.Event{Name: harness.OutputTextDelta, Data: map[string]any{"text": fmt.Sprint(i, " ")}})
		}
		return harness.Result{}, nil
	})
	_, sse := e.Stream(map[string]any{"input": "x"})
	created, _ := sse.Next()
	for i := range deltas {
		step <- struct{}{}
		ev, ok := sse.Next()
		if !ok || ev.ID != strconv.Itoa(i+2) {
			t.Fatalf("live event %d: %v %v", i, ev, ok)
		}
	}
	last, _ := sse.Next()
	if last.Name != "response.completed" || last.ID != strconv.Itoa(deltas+2) {
		t.Fatalf("live terminal %v", last)
	}
	id := created.Data["id"].(string)
	replayed := e.Replay(id)
	if len(replayed) != 10 || replayed[9].ID != "10" {
		t.Fatalf("replay has %d events, last %v", len(replayed), replayed[len(replayed)-1])
	}
	// Resuming inside the tail still works; before it, the stream ends.
	tail := e.Replay(id, "Last-Event-ID", strconv.Itoa(deltas))
	if d := cmp.Diff([]string{"response.output_text.delta", "response.completed"}, names(tail)); d != "" {
		t.Fatal(d)
	}
	if got := e.Replay(id, "Last-Event-ID", "12"); len(got) != 0 {
		t.Fatalf("resume behind the tail got %d events", len(got))
	}
}

func TestKeepAliveWhetherOrNotEventsFlow(t *testing.T) {
	e := newEnv(t, testConfig(t))
	quiet, busy, stop := make(chan struct{}), make(chan struct{}), make(chan struct{})
	e.h.setRun(func(ctx context.Context, turn harness.Turn, emit func(harness.Event) error) (harness.Result, error) {
		<-quiet
		for {
			select {
			case <-stop:
				return harness.Result{OutputText: "done"}, nil
			case <-busy:
			default:
				emit(harness.Event{Name: harness.ReasoningDelta, Data: map[string]any{"text": "."}})
				time.Sleep(time.Millisecond)
			}
		}
	})
	_, sse := e.Stream(map[string]any{"input": "x"})
	sse.Next() // created
	// No events: keepalives arrive on their own. Reading an event blocks
	// until then, so count comments after the first emitted event.
	close(quiet)
	sse.Next()
	before := sse.Comments
	for sse.Comments < before+2 {
		if _, ok := sse.Next(); !ok {
			t.Fatal("stream ended")
		}
	}
	close(stop)
	evs := sse.All()
	if evs[len(evs)-1].Name != "response.completed" {
		t.Fatalf("last event %v", evs[len(evs)-1])
	}
}

func TestKeepAliveOnAQuietStream(t *testing.T) {
	e := newEnv(t, testConfig(t))
	release := make(chan struct{})
	e.h.setRun(holdRun(release))
	resp, sse := e.Stream(map[string]any{"input": "x"})
	sse.Next()
	sse.Next()
	// Nothing is emitted while held: only comments arrive.
	for n := 0; n < 2; n++ {
		ev, err := sse.NextFrame()
		if err != nil || ev.Comment != "keepalive" {
			t.Fatalf("frame %+v, %v; want a keepalive", ev, err)
		}
	}
	close(release)
	resp.Body.Close()
}

// TestCloseCancelsRunningTurns: shutting the gateway down stops running
// turns as cancelled, and their streams still end with a terminal event.
func TestCloseCancelsRunningTurns(t *testing.T) {
	e := newEnv(t, testConfig(t))
	e.h.setRun(holdRun(make(chan struct{})))
	_, sse := e.Stream(map[string]any{"input": "x"})
	created, _ := sse.Next()
	sse.Next()
	go e.gw.Close()
	rest := sse.All()
	if d := cmp.Diff([]string{"response.completed"}, names(rest)); d != "" {
		t.Fatal(d)
	}
	rec, _ := e.gw.records.get(created.Data["id"].(string))
	if obj := rec.object(); obj.Status != statusCancelled || obj.OutputText != "first " {
		t.Fatalf("record %+v", obj)
	}
	// A closed gateway refuses new turns instead of starting them.
	e.gw.Close()
	status, body := e.Call("POST", "/v1/responses", map[string]any{"input": "late"})
	wantError(t, status, body, 503, "unavailable", "")
}
