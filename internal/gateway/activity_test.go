package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/harness"
)

// TestActivity: GET /v1/activity counts running turns, client or not,
// moves last_activity_ms when a turn starts and ends, and needs the token.
func TestActivity(t *testing.T) {
	cfg := testConfig(t)
	cfg.Token = "tok"
	e := newEnv(t, cfg)
	hdr := []string{TokenHeader, "tok"}
	status, body := e.Call("GET", "/v1/activity", nil, hdr...)
	if status != 200 || body["active_responses"] != 0.0 || body["last_activity_ms"] != 0.0 {
		t.Fatalf("idle gateway: %d %v", status, body)
	}
	if status, _ := e.Call("GET", "/v1/activity", nil); status != 401 {
		t.Fatalf("without the token: %d", status)
	}

	release := make(chan struct{})
	e.h.setRun(func(ctx context.Context, turn harness.Turn, emit func(harness.Event) error) (harness.Result, error) {
		<-release
		return echo(ctx, turn, emit)
	})
	before := time.Now().UnixMilli()
	// Two turns on two sessions; their clients go away at once.
	for range 2 {
		resp := e.Do("POST", "/v1/responses", `{"input": "hi", "stream": true}`, hdr...)
		resp.Body.Close()
	}
	status, body = e.Call("GET", "/v1/activity", nil, hdr...)
	started := body["last_activity_ms"].(float64)
	if status != 200 || body["active_responses"] != 2.0 || started < float64(before) {
		t.Fatalf("two turns running without clients: %v", body)
	}
	close(release)
	eventually(t, "the turns to end", func() bool {
		_, body = e.Call("GET", "/v1/activity", nil, hdr...)
		return body["active_responses"] == 0.0
	})
	if body["last_activity_ms"].(float64) < started {
		t.Fatalf("last activity went back: %v", body)
	}
}
