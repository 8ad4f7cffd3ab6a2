package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/sse"
)

// env is a gateway on a real loopback server with a scripted general-a as
// the default harness; general-b is provisioned only when asked.
type env struct {
	t    *testing.T
	url  string
	gw   *Server
	h    *scriptHarness
	home string
	cfg  Config
}

// testConfig shortens the intervals that tests wait on; expiry stays long
// unless a test shortens it.
func testConfig(t *testing.T) Config {
	cfg := DefaultConfig()
	cfg.Home = t.TempDir()
	cfg.Tick = 10 * time.Millisecond
	cfg.KeepAlive = 10 * time.Millisecond
	cfg.HealthTimeout = time.Second
	return cfg
}

func newEnv(t *testing.T, cfg Config, extra ...harness.Harness) *env {
	t.Helper()
	h := newScriptHarness(harness.GeneralA)
	gw, err := New(cfg, Registry{Default: harness.GeneralA, Harnesses: append([]harness.Harness{h}, extra...)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		gw.Close()
	})
	return &env{t: t, url: srv.URL, gw: gw, h: h, home: cfg.Home, cfg: cfg}
}

// request sends a request with body (string, []byte or a value to encode
// as JSON) and returns the response; the body is closed at cleanup.
func (e *env) request(method, path string, body any, header ...string) *http.Response {
	e.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		js, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		r = bytes.NewReader(js)
	}
	req, err := http.NewRequest(method, e.url+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// call sends a request and decodes a JSON reply into a map.
func (e *env) call(method, path string, body any, header ...string) (int, map[string]any) {
	e.t.Helper()
	resp := e.request(method, path, body, header...)
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		e.t.Fatalf("%s %s: status %d, body %q is not a JSON object: %v", method, path, resp.StatusCode, raw, err)
	}
	return resp.StatusCode, out
}

// wantError checks the gateway error envelope.
func wantError(t *testing.T, status int, body map[string]any, wantStatus int, code, param string) {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("status %d, want %d (body %v)", status, wantStatus, body)
	}
	e, ok := body["error"].(map[string]any)
	if !ok {
		t.Fatalf("body %v has no error object", body)
	}
	if e["code"] != code {
		t.Fatalf("code %v, want %s (%v)", e["code"], code, e)
	}
	if got, _ := e["param"].(string); got != param {
		t.Fatalf("param %q, want %q (%v)", got, param, e)
	}
	if m, _ := e["message"].(string); m == "" {
		t.Fatalf("error without message: %v", e)
	}
}

// sseEvent is one parsed SSE frame with its JSON payload decoded.
type sseEvent struct {
	ID   string
	Name string
	Data map[string]any
}

// sseReader wraps sse.Reader to fail the test on malformed frames.
type sseReader struct {
	*sse.Reader
}

func newSSEReader(r io.Reader) *sseReader { return &sseReader{sse.NewReader(r)} }

// next returns the next event, or false at the end of the stream.
func (s *sseReader) next(t *testing.T) (sseEvent, bool) {
	t.Helper()
	ev, err := s.Next()
	if errors.Is(err, io.EOF) {
		return sseEvent{}, false
	}
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	out := sseEvent{ID: ev.ID, Name: ev.Name}
	if err := json.Unmarshal(ev.Data, &out.Data); err != nil {
		t.Fatalf("data %q: %v", ev.Data, err)
	}
	return out, true
}

// all reads every remaining event.
func (s *sseReader) all(t *testing.T) []sseEvent {
	t.Helper()
	var evs []sseEvent
	for {
		ev, ok := s.next(t)
		if !ok {
			return evs
		}
		evs = append(evs, ev)
	}
}

// stream posts a streaming turn and returns the response and its reader.
func (e *env) stream(body map[string]any) (*http.Response, *sseReader) {
	e.t.Helper()
	body["stream"] = true
	resp := e.request("POST", "/v1/responses", body)
	if resp.StatusCode != 200 {
		raw, _ := io.ReadAll(resp.Body)
		e.t.Fatalf("stream: status %d: %s", resp.StatusCode, raw)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		e.t.Fatalf("Content-Type %q", ct)
	}
	return resp, newSSEReader(resp.Body)
}

// replay reads GET /v1/responses/{id}/stream to its end.
func (e *env) replay(id string, header ...string) []sseEvent {
	e.t.Helper()
	resp := e.request("GET", "/v1/responses/"+id+"/stream", nil, header...)
	if resp.StatusCode != 200 {
		raw, _ := io.ReadAll(resp.Body)
		e.t.Fatalf("replay: status %d: %s", resp.StatusCode, raw)
	}
	return newSSEReader(resp.Body).all(e.t)
}

func names(evs []sseEvent) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Name)
	}
	return out
}

// eventually polls cond, for behaviour that follows a timer.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
