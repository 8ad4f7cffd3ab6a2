package coding_test

import (
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/svc-dev/svc/internal/gateway"
	"github.com/svc-dev/svc/internal/gateway/gatewaytest"
	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/harness/coding"
)

// TestUnconnectedThroughGateway checks what a client sees of a coding
// harness with no account, over real HTTP through the gateway.
func TestUnconnectedThroughGateway(t *testing.T) {
	var hs []harness.Harness
	for _, id := range []string{harness.CodingA, harness.CodingB, harness.CodingC} {
		h, err := coding.New(id)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	if _, err := coding.New(harness.GeneralA); err == nil {
		t.Fatal("general-a accepted as a coding harness")
	}
	cfg := gateway.DefaultConfig()
	cfg.Home = t.TempDir()
	gw, err := gateway.New(cfg, gateway.Registry{Default: harness.CodingA, Harnesses: hs}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()
	c := gatewaytest.New(t, srv.URL)

	for id, hint := range map[string]string{
		harness.CodingA: "connect a vendor-A account",
		harness.CodingB: "device login",
		harness.CodingC: "vendor-C API key",
	} {
		status, body := c.Call("GET", "/v1/health?agent="+id, nil)
		if status != 200 || body["ok"] != true || body["healthy"] != false || body["agent"] != id {
			t.Fatalf("%s health: %d %v", id, status, body)
		}
		if h, _ := body["hint"].(string); !contains(h, hint) {
			t.Fatalf("%s health hint %q", id, h)
		}
		status, body = c.Call("POST", "/v1/responses", map[string]any{"input": "hi", "agent": id})
		e, _ := body["error"].(map[string]any)
		if status != 200 || body["status"] != "failed" || e["code"] != "auth_error" || !contains(e["hint"].(string), hint) {
			t.Fatalf("%s turn: %d %v", id, status, body)
		}
		// These harnesses mint session ids: an unissued one is refused.
		status, body = c.Call("POST", "/v1/responses", map[string]any{"input": "hi", "agent": id, "session_id": "0123456789abcdef0123456789abcdef"})
		gatewaytest.WantError(t, status, body, 400, "validation_error", "session_id")
		status, body = c.Call("GET", "/v1/sessions?agent="+id, nil)
		if status != 200 || len(body["data"].([]any)) != 0 {
			t.Fatalf("%s sessions: %d %v", id, status, body)
		}
	}
	status, body := c.Call("PATCH", "/v1/sessions/0123456789abcdef0123456789abcdef?agent=coding-c", map[string]any{"title": "x"})
	gatewaytest.WantError(t, status, body, 405, "rename_unsupported", "")
	status, body = c.Call("PATCH", "/v1/sessions/0123456789abcdef0123456789abcdef?agent=coding-a", map[string]any{"title": "x"})
	if status != 200 || body["renamed"] != false {
		t.Fatalf("coding-a rename: %d %v", status, body)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
