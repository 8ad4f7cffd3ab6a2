package harnesstest

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-dev/svc/internal/gateway/gatewaytest"
	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/modeltest"
)

// row finds a session in GET /v1/sessions.
func (r *rig) row(id string) map[string]any {
	r.t.Helper()
	status, list := r.Call("GET", "/v1/sessions", nil)
	if status != 200 || list["agent"] != r.p.ID {
		r.t.Fatalf("list: %d %v", status, list)
	}
	data, ok := list["data"].([]any)
	if !ok {
		r.t.Fatalf("list data %v", list["data"])
	}
	for _, x := range data {
		if m := x.(map[string]any); m["id"] == id {
			return m
		}
	}
	return nil
}

// testSessions: the session calls project the harness's sessions in the
// spec's shapes.
func testSessions(t *testing.T, p Profile) {
	r := newRig(t, p)
	_, first := r.Call("POST", "/v1/responses", map[string]any{"input": "Plan the trip"})
	sid := first["session_id"].(string)
	_, second := r.Call("POST", "/v1/responses", map[string]any{"input": "Another thread"})
	sid2 := second["session_id"].(string)
	if first["status"] != "completed" || second["status"] != "completed" || sid == sid2 {
		t.Fatalf("turns %v %v", first, second)
	}
	if !p.MintsSessionIDs && !hex32.MatchString(sid) {
		t.Fatalf("new session id %q is not 32 hex", sid)
	}

	// A second turn continues the conversation: the model sees the first.
	_, again := r.Call("POST", "/v1/responses", map[string]any{"input": "And then?", "session_id": sid})
	if again["session_id"] != sid || again["status"] != "completed" {
		t.Fatalf("continued turn %v", again)
	}
	reqs := turnRequests(r.model)
	if !slices.ContainsFunc(reqs[len(reqs)-1].Messages, func(m modeltest.Message) bool {
		return m.Role == "user" && strings.Contains(m.Text(), "Plan the trip")
	}) {
		t.Fatal("the continued turn did not carry the session's history to the model")
	}

	status, list := r.Call("GET", "/v1/sessions", nil)
	data, _ := list["data"].([]any)
	if status != 200 || list["agent"] != p.ID || data == nil {
		t.Fatalf("list: %d %v", status, list)
	}
	if len(data) > 0 {
		ids := []string{}
		for _, x := range data {
			id, _ := x.(map[string]any)["id"].(string)
			ids = append(ids, id)
		}
		if i, j := slices.Index(ids, sid), slices.Index(ids, sid2); i < 0 || j < 0 || i > j {
			t.Fatalf("list %v: want %s (most recent) before %s", ids, sid, sid2)
		}
		row := r.row(sid)
		for _, k := range []string{"id", "title", "last_active", "message_count", "preview"} {
			if _, ok := row[k]; !ok {
				t.Fatalf("row without %s: %v", k, row)
			}
		}
		if p.Titles {
			gatewaytest.Eventually(t, "a generated title", func() bool {
				title, _ := r.row(sid)["title"].(string)
				return title != ""
			})
		} else if row["title"] != nil {
			t.Fatalf("title %v before any rename", row["title"])
		}
		if n, _ := row["message_count"].(float64); p.MessageCount != (row["message_count"] != nil) || (p.MessageCount && n < 4) {
			t.Fatalf("message_count %v (harness reports it: %v)", row["message_count"], p.MessageCount)
		}
		if pv, _ := row["preview"].(string); p.Preview != (row["preview"] != nil) || (p.Preview && (pv == "" || !strings.HasPrefix("Plan the trip", pv) && !strings.HasPrefix(pv, "Plan the trip"))) {
			t.Fatalf("preview %v (harness reports it: %v)", row["preview"], p.Preview)
		}
		if la, ok := row["last_active"].(float64); ok && la < 1e12 {
			t.Fatalf("last_active %v is not epoch ms", la)
		}
	}

	_, read := r.Call("GET", "/v1/sessions/"+sid, nil)
	if read["id"] != sid || read["agent"] != p.ID || read["active_response_id"] != nil {
		t.Fatalf("read %v", read)
	}
	history, _ := read["history"].([]any)
	var user, assistant []string
	for _, x := range history {
		m := x.(map[string]any)
		if id, _ := m["id"].(string); id == "" || m["session_id"] != sid || m["created_at"].(float64) < 1e12 {
			t.Fatalf("message %v", m)
		}
		switch m["role"] {
		case "user":
			user = append(user, m["content"].(string))
		case "assistant":
			assistant = append(assistant, m["content"].(string))
		case "system":
		default:
			t.Fatalf("role %v", m["role"])
		}
	}
	if len(user) != 2 || !strings.Contains(user[0], "Plan the trip") || !slices.Contains(assistant, first["output_text"].(string)) {
		t.Fatalf("history users %q assistants %q", user, assistant)
	}
	if d := cmp.Diff(again["context"], read["context"]); d != "" {
		t.Fatalf("session context is not the last turn's: %s", d)
	}

	if p.Renames {
		status, body := r.Call("PATCH", "/v1/sessions/"+sid, map[string]any{"title": "Trip plans"})
		if status != 200 || cmp.Diff(map[string]any{"id": sid, "agent": p.ID, "renamed": true}, body) != "" {
			t.Fatalf("rename: %d %v", status, body)
		}
		if row := r.row(sid); row != nil && row["title"] != "Trip plans" {
			t.Fatalf("title after rename %v", row["title"])
		}
		status, body = r.Call("PATCH", "/v1/sessions/"+sid2, map[string]any{"title": "Trip plans"})
		gatewaytest.WantError(t, status, body, 409, "title_conflict", "title")
		_, body = r.Call("PATCH", "/v1/sessions/0123456789abcdef0123456789abcdef", map[string]any{"title": "Nobody"})
		if body["renamed"] != false {
			t.Fatalf("rename of an unknown session %v", body)
		}
	} else {
		status, body := r.Call("PATCH", "/v1/sessions/"+sid, map[string]any{"title": "Trip plans"})
		gatewaytest.WantError(t, status, body, 405, "rename_unsupported", "")
	}
	status, body := r.Call("PATCH", "/v1/sessions/"+sid, map[string]any{"title": ""})
	gatewaytest.WantError(t, status, body, 400, "validation_error", "title")

	status, body = r.Call("DELETE", "/v1/sessions/"+sid, nil)
	if status != 200 || cmp.Diff(map[string]any{"id": sid, "deleted": true}, body) != "" {
		t.Fatalf("delete: %d %v", status, body)
	}
	if _, body = r.Call("DELETE", "/v1/sessions/"+sid, nil); body["deleted"] != false {
		t.Fatalf("second delete %v", body)
	}
	_, read = r.Call("GET", "/v1/sessions/"+sid, nil)
	if h, _ := read["history"].([]any); h == nil || len(h) != 0 || read["context"] != nil {
		t.Fatalf("read after delete %v", read)
	}
	if r.row(sid) != nil {
		t.Fatal("deleted session still listed")
	}
	status, body = r.Call("GET", "/v1/sessions?agent=nobody", nil)
	gatewaytest.WantError(t, status, body, 400, "validation_error", "agent")
}

// testSessionIDs: an unseen session_id starts a thread under that id,
// except on harnesses that mint their own ids, which reject it.
func testSessionIDs(t *testing.T, p Profile) {
	r := newRig(t, p)
	const unseen = "0123456789abcdef0123456789abcdef"
	status, obj := r.Call("POST", "/v1/responses", map[string]any{"input": "hello", "session_id": unseen})
	if p.MintsSessionIDs {
		gatewaytest.WantError(t, status, obj, 400, "validation_error", "session_id")
		return
	}
	if status != 200 || obj["status"] != "completed" || obj["session_id"] != unseen {
		t.Fatalf("unseen id: %d %v", status, obj)
	}
	_, read := r.Call("GET", "/v1/sessions/"+unseen, nil)
	if h, _ := read["history"].([]any); len(h) == 0 {
		t.Fatalf("no history under the unseen id: %v", read)
	}
}

// testHealth: readiness, version and the model catalog.
func testHealth(t *testing.T, p Profile) {
	r := newRig(t, p)
	gatewaytest.Eventually(t, "the harness to be healthy", func() bool {
		_, h := r.Call("GET", "/v1/health", nil)
		return h["healthy"] == true
	})
	_, h := r.Call("GET", "/v1/health?agent="+p.ID, nil)
	_, legacy := h["hermes"]
	if h["ok"] != true || h["agent"] != p.ID || legacy != (p.ID == harness.GeneralA) {
		t.Fatalf("health %v", h)
	}
	_, v := r.Call("GET", "/v1/version", nil)
	if v["name"] != "svc-gateway" || v["version"] == "" {
		t.Fatalf("version %v", v)
	}
	status, m := r.Call("GET", "/v1/models", nil)
	data, _ := m["data"].([]any)
	if status != 200 || m["agent"] != p.ID || len(data) == 0 {
		t.Fatalf("models: %d %v", status, m)
	}
	for _, x := range data {
		if id, _ := x.(map[string]any)["id"].(string); id == "" {
			t.Fatalf("model without id: %v", x)
		}
	}
}
