package gateway

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-dev/svc/internal/harness"
)

func TestSessions(t *testing.T) {
	e := newEnv(t, testConfig(t))
	_, first := e.Call("POST", "/v1/responses", map[string]any{"input": "first question"})
	sid := first["session_id"].(string)
	_, other := e.Call("POST", "/v1/responses", map[string]any{"input": "another"})
	otherID := other["session_id"].(string)

	status, list := e.Call("GET", "/v1/sessions", nil)
	if status != 200 || list["agent"] != "general-a" {
		t.Fatalf("list %d %v", status, list)
	}
	rows := list["data"].([]any)
	if len(rows) != 2 {
		t.Fatalf("rows %v", rows)
	}
	row := rows[1].(map[string]any)
	if row["id"] != sid || row["title"] != nil || row["message_count"] != 2.0 || row["preview"] != "first question" {
		t.Fatalf("row %v", row)
	}

	_, read := e.Call("GET", "/v1/sessions/"+sid, nil)
	want := map[string]any{
		"id": sid, "agent": "general-a", "active_response_id": nil,
		"context": map[string]any{"used_tokens": 15.0, "window_tokens": 64000.0},
		"history": []any{
			map[string]any{"id": "u0", "session_id": sid, "role": "user", "content": "first question", "created_at": read["history"].([]any)[0].(map[string]any)["created_at"]},
			map[string]any{"id": "a1", "session_id": sid, "role": "assistant", "content": "echo: first question", "created_at": read["history"].([]any)[1].(map[string]any)["created_at"]},
		},
	}
	if d := cmp.Diff(want, read); d != "" {
		t.Fatalf("session read (-want +got):\n%s", d)
	}
	// Unknown ids read as an empty history, not 404.
	_, unknown := e.Call("GET", "/v1/sessions/0123456789abcdef0123456789abcdef", nil)
	if d := cmp.Diff(map[string]any{"id": "0123456789abcdef0123456789abcdef", "agent": "general-a", "active_response_id": nil, "history": []any{}, "context": nil}, unknown); d != "" {
		t.Fatal(d)
	}

	status, renamed := e.Call("PATCH", "/v1/sessions/"+sid, map[string]any{"title": "  Plans  ", "extra": 1})
	if status != 200 || cmp.Diff(map[string]any{"id": sid, "agent": "general-a", "renamed": true}, renamed) != "" {
		t.Fatalf("rename %d %v", status, renamed)
	}
	_, list = e.Call("GET", "/v1/sessions", nil)
	if title := list["data"].([]any)[1].(map[string]any)["title"]; title != "Plans" {
		t.Fatalf("title %v", title)
	}
	status, body := e.Call("PATCH", "/v1/sessions/"+otherID, map[string]any{"title": "Plans"})
	wantError(t, status, body, 409, "title_conflict", "")
	_, renamed = e.Call("PATCH", "/v1/sessions/nosuchsession", map[string]any{"title": "x"})
	if renamed["renamed"] != false {
		t.Fatalf("rename of unknown %v", renamed)
	}
	for _, bad := range []struct {
		body  string
		param string
	}{{`{}`, "title"}, {`{"title":""}`, "title"}, {`{"title":"   "}`, "title"}, {`{"title":5}`, "title"}, {`{"title"`, ""}, {`null`, ""}} {
		status, body := e.Call("PATCH", "/v1/sessions/"+sid, bad.body)
		wantError(t, status, body, 400, "validation_error", bad.param)
	}
	status, body = e.Call("PATCH", "/v1/sessions/"+sid, `{"title":"`+strings.Repeat("a", 64<<10)+`"}`)
	wantError(t, status, body, 413, "payload_too_large", "")

	// Harness codes pass through with their statuses.
	e.h.mu.Lock()
	e.h.renameErr = harness.Errorf("rename_unsupported", "this harness has no editable titles")
	e.h.mu.Unlock()
	status, body = e.Call("PATCH", "/v1/sessions/"+sid, map[string]any{"title": "x"})
	wantError(t, status, body, 405, "rename_unsupported", "")
	e.h.mu.Lock()
	e.h.renameErr = &harness.Error{Code: "validation_error", Message: "title too long", Param: "title"}
	e.h.mu.Unlock()
	status, body = e.Call("PATCH", "/v1/sessions/"+sid, map[string]any{"title": "x"})
	wantError(t, status, body, 400, "validation_error", "title")

	status, del := e.Call("DELETE", "/v1/sessions/"+sid, nil)
	if status != 200 || cmp.Diff(map[string]any{"id": sid, "deleted": true}, del) != "" {
		t.Fatalf("delete %d %v", status, del)
	}
	_, del = e.Call("DELETE", "/v1/sessions/"+sid, nil)
	if del["deleted"] != false {
		t.Fatalf("second delete %v", del)
	}
	// Delete forgets the context.
	if _, read := e.Call("GET", "/v1/sessions/"+sid, nil); read["context"] != nil {
		t.Fatalf("context after delete %v", read["context"])
	}
}

func TestSessionAgentParam(t *testing.T) {
	b := newScriptHarness(harness.GeneralB)
	e := newEnv(t, testConfig(t), b)
	e.Call("POST", "/v1/responses", map[string]any{"input": "x", "agent": "general-b", "session_id": "bsess"})

	_, list := e.Call("GET", "/v1/sessions?agent=general-b", nil)
	if list["agent"] != "general-b" || len(list["data"].([]any)) != 1 {
		t.Fatalf("general-b list %v", list)
	}
	// Empty means the default; a harness with no sessions lists [].
	_, list = e.Call("GET", "/v1/sessions?agent=", nil)
	if list["agent"] != "general-a" || list["data"] == nil || len(list["data"].([]any)) != 0 {
		t.Fatalf("default list %v", list)
	}
	for _, path := range []string{"/v1/sessions", "/v1/sessions/bsess"} {
		for _, m := range []string{"GET", "PATCH", "DELETE"} {
			if path == "/v1/sessions" && m != "GET" {
				continue
			}
			status, body := e.Call(m, path+"?agent=nobody", map[string]any{"title": "t"})
			wantError(t, status, body, 400, "validation_error", "agent")
			status, body = e.Call(m, path+"?agent=coding-d", map[string]any{"title": "t"})
			wantError(t, status, body, 503, "agent_unavailable", "")
		}
	}
	status, body := e.Call("GET", "/v1/sessions/bad%2Fid", nil)
	wantError(t, status, body, 400, "validation_error", "id")
}

func TestContextMemory(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxContexts = 2
	e := newEnv(t, cfg)
	usage := func(in, out, cache int64, model string) func(context.Context, harness.Turn, func(harness.Event) error) (harness.Result, error) {
		return func(ctx context.Context, turn harness.Turn, emit func(harness.Event) error) (harness.Result, error) {
			return harness.Result{OutputText: "ok", Usage: &harness.Usage{InputTokens: in, OutputTokens: out, CacheTokens: cache, Model: model}}, nil
		}
	}
	cases := []struct {
		name  string
		run   func(context.Context, harness.Turn, func(harness.Event) error) (harness.Result, error)
		model string
		want  any
	}{
		{"catalog window", usage(1000, 200, 300, "m1"), "", map[string]any{"used_tokens": 1500.0, "window_tokens": 64000.0}},
		{"no window listed", usage(1, 1, 0, "m2"), "", map[string]any{"used_tokens": 2.0, "window_tokens": 128000.0}},
		{"request model when the harness names none", usage(1, 1, 0, ""), "m1", map[string]any{"used_tokens": 2.0, "window_tokens": 64000.0}},
		{"model missing from catalog", usage(1, 1, 0, "m9"), "", nil},
		{"no model", usage(1, 1, 0, ""), "", nil},
		{"zero total", usage(0, 0, 0, "m1"), "", nil},
		{"no usage", func(context.Context, harness.Turn, func(harness.Event) error) (harness.Result, error) {
			return harness.Result{OutputText: "ok"}, nil
		}, "", nil},
		{"harness's own", func(context.Context, harness.Turn, func(harness.Event) error) (harness.Result, error) {
			return harness.Result{OutputText: "ok", Usage: &harness.Usage{InputTokens: 5, Model: "m1"}, Context: &harness.Context{UsedTokens: 42, WindowTokens: 1000}}, nil
		}, "", map[string]any{"used_tokens": 42.0, "window_tokens": 1000.0}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.h.setRun(c.run)
			body := map[string]any{"input": "x", "session_id": fmt.Sprint("ctx", i)}
			if c.model != "" {
				body["model"] = c.model
			}
			_, obj := e.Call("POST", "/v1/responses", body)
			if d := cmp.Diff(c.want, obj["context"]); d != "" {
				t.Fatalf("context (-want +got):\n%s", d)
			}
		})
	}
	// Only the last two sessions that reported a context are remembered
	// (cases 0, 1, 2 and 7 reported one).
	for i, want := range map[int]bool{0: false, 1: false, 2: true, 7: true} {
		_, read := e.Call("GET", fmt.Sprint("/v1/sessions/ctx", i), nil)
		if (read["context"] != nil) != want {
			t.Fatalf("session ctx%d context %v, want remembered=%v", i, read["context"], want)
		}
	}
}

func TestHealthVersionModels(t *testing.T) {
	b := newScriptHarness(harness.GeneralB)
	b.healthy = false
	e := newEnv(t, testConfig(t), b)
	cases := []struct {
		query string
		want  map[string]any
	}{
		{"", map[string]any{"ok": true, "agent": "general-a", "healthy": true, "hermes": true}},
		{"?agent=", map[string]any{"ok": true, "agent": "general-a", "healthy": true, "hermes": true}},
		{"?agent=general-b", map[string]any{"ok": true, "agent": "general-b", "healthy": false}},
		{"?agent=coding-a", map[string]any{"ok": true, "agent": "coding-a", "healthy": false}},
	}
	for _, c := range cases {
		status, body := e.Call("GET", "/v1/health"+c.query, nil)
		if status != 200 || cmp.Diff(c.want, body) != "" {
			t.Fatalf("health%s: %d %s", c.query, status, cmp.Diff(c.want, body))
		}
	}
	status, body := e.Call("GET", "/v1/health?agent=x", nil)
	wantError(t, status, body, 400, "validation_error", "agent")

	_, v := e.Call("GET", "/v1/version", nil)
	if v["name"] != "svc-gateway" || !semverAtLeast(t, v["version"].(string), 0, 15, 1) {
		t.Fatalf("version %v", v)
	}

	_, models := e.Call("GET", "/v1/models", nil)
	want := map[string]any{"agent": "general-a", "data": []any{
		map[string]any{"id": "m1", "context_window": 64000.0, "default": true},
		map[string]any{"id": "m2"},
	}}
	if d := cmp.Diff(want, models); d != "" {
		t.Fatal(d)
	}
	status, body = e.Call("GET", "/v1/models?agent=coding-b", nil)
	wantError(t, status, body, 503, "agent_unavailable", "")

	status, body = e.Call("GET", "/v1/nothing", nil)
	wantError(t, status, body, 404, "not_found", "")
}

var semverRE = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)$`)

func semverAtLeast(t *testing.T, v string, major, minor, patch int) bool {
	m := semverRE.FindStringSubmatch(v)
	if m == nil {
		t.Fatalf("version %q is not semver", v)
	}
	var got [3]int
	fmt.Sscan(m[1]+" "+m[2]+" "+m[3], &got[0], &got[1], &got[2])
	want := [3]int{major, minor, patch}
	for i := range got {
		if got[i] != want[i] {
			return got[i] > want[i]
		}
	}
	return true
}

func TestTokenAuth(t *testing.T) {
	cfg := testConfig(t)
	cfg.Token = "s3cret"
	e := newEnv(t, cfg)
	for _, token := range []string{"", "wrong", "s3cre", "S3CRET"} {
		var hdr []string
		if token != "" {
			hdr = []string{TokenHeader, token}
		}
		status, body := e.Call("GET", "/v1/version", nil, hdr...)
		if status != 401 || cmp.Diff(map[string]any{"error": "unauthorized"}, body) != "" {
			t.Fatalf("token %q: %d %v", token, status, body)
		}
	}
	if status, _ := e.Call("GET", "/v1/version", nil, TokenHeader, "s3cret"); status != 200 {
		t.Fatalf("right token: %d", status)
	}
}

// TestNoTokenServesLoopbackOnly listens on a non-loopback address of this
// machine and connects from it, so the gateway sees a real non-loopback
// client.
func TestNoTokenServesLoopbackOnly(t *testing.T) {
	var ip net.IP
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			ip = n.IP
			break
		}
	}
	if ip == nil {
		t.Skip("this machine has no non-loopback IPv4 address to connect from")
	}
	gw, err := New(testConfig(t), Registry{Default: harness.GeneralA}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(gw.Handler())
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/v1/version")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("non-loopback client without a token: %d", resp.StatusCode)
	}
	loop := httptest.NewServer(gw.Handler())
	defer loop.Close()
	resp, err = http.Get(loop.URL + "/v1/version")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("loopback client: %d", resp.StatusCode)
	}
}
