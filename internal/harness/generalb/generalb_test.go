package generalb

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/modeltest"
	_ "modernc.org/sqlite"
)

type env struct {
	srv *modeltest.Server
	cfg Config
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv, err := modeltest.Start(modeltest.Config{Models: []modeltest.Model{
		{ID: "small", ContextWindow: 16000}, {ID: "big"}, {ID: "org/with-slash", ContextWindow: 64000}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &env{srv: srv, cfg: Config{Home: t.TempDir(), ModelBaseURL: srv.URL, Model: "small"}}
}

func (e *env) open(t *testing.T) *Harness {
	t.Helper()
	h, err := New(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func turn(t *testing.T, h *Harness, tr harness.Turn) (harness.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return h.Run(ctx, tr, func(harness.Event) error { return nil })
}

func lastRequest(t *testing.T, srv *modeltest.Server) modeltest.Request {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no model request")
	}
	return reqs[len(reqs)-1]
}

func TestStopCommandsRunNothing(t *testing.T) {
	e := newEnv(t)
	h := e.open(t)
	for _, in := range []string{"stop", "EXIT", "  Stop \n", "\texit"} {
		res, err := turn(t, h, harness.Turn{NewSession: true, Input: in})
		if !errors.Is(err, harness.ErrStopped) || res.OutputText != "" || res.Usage != nil {
			t.Fatalf("%q: %+v %v", in, res, err)
		}
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Fatalf("stop commands made %d model calls", n)
	}
	if rows, _ := h.Sessions(context.Background()); len(rows) != 0 {
		t.Fatalf("stop commands created sessions %+v", rows)
	}
	for _, in := range []string{"stop it", "exit now", "stopp"} {
		if _, err := turn(t, h, harness.Turn{Input: in}); err != nil {
			t.Fatalf("%q: %v", in, err)
		}
	}
}

func TestModelSticksToTheSession(t *testing.T) {
	e := newEnv(t)
	h := e.open(t)
	ctx := context.Background()
	models, _ := h.Models(ctx)
	var ids []string
	for _, m := range models {
		ids = append(ids, m.ID)
		if m.Provider != "svc" {
			t.Fatalf("provider %+v", m)
		}
	}
	if strings.Join(ids, ",") != "svc/small,svc/big,svc/org/with-slash" || !models[0].Default || models[1].ContextWindow != 128000 || models[0].ContextWindow != 16000 {
		t.Fatalf("catalog %+v", models)
	}

	res, err := turn(t, h, harness.Turn{NewSession: true, Input: "one"})
	if err != nil {
		t.Fatal(err)
	}
	id := res.SessionID
	if lastRequest(t, e.srv).Model != "small" || res.Usage.Model != "svc/small" || res.Context != nil {
		t.Fatalf("default model: %+v", res)
	}
	res, err = turn(t, h, harness.Turn{SessionID: id, Input: "two", Model: "svc/big"})
	if err != nil || lastRequest(t, e.srv).Model != "big" || res.Usage.Model != "svc/big" {
		t.Fatalf("switch: %+v %v", res, err)
	}
	// Omitted: the session's model.
	if _, err := turn(t, h, harness.Turn{SessionID: id, Input: "three"}); err != nil || lastRequest(t, e.srv).Model != "big" {
		t.Fatalf("sticky: %v, model %q", err, lastRequest(t, e.srv).Model)
	}
	// Not in the catalog (unknown model, other provider): a failed turn
	// before any run, and the session keeps its model.
	n := len(e.srv.Requests())
	for _, bad := range []string{"svc/huge", "openai/big", "huge"} {
		_, err := turn(t, h, harness.Turn{SessionID: id, Input: "four", Model: bad})
		he, ok := harness.AsError(err)
		if !ok || he.Code != "agent_error" || !strings.Contains(he.Message, bad) {
			t.Fatalf("%s: %v", bad, err)
		}
	}
	if len(e.srv.Requests()) != n {
		t.Fatal("a rejected model reached the endpoint")
	}
	if _, err := turn(t, h, harness.Turn{SessionID: id, Input: "five"}); err != nil || lastRequest(t, e.srv).Model != "big" {
		t.Fatalf("after rejection: %v, model %q", err, lastRequest(t, e.srv).Model)
	}
	// Bare catalog ids and ids with slashes resolve; provider is ignored.
	if _, err := turn(t, h, harness.Turn{SessionID: id, Input: "six", Model: "org/with-slash", Provider: "elsewhere"}); err != nil || lastRequest(t, e.srv).Model != "org/with-slash" {
		t.Fatalf("slash id: %v, model %q", err, lastRequest(t, e.srv).Model)
	}
	// Survives a restart.
	h.Close()
	h2 := e.open(t)
	if _, err := turn(t, h2, harness.Turn{SessionID: id, Input: "seven"}); err != nil || lastRequest(t, e.srv).Model != "org/with-slash" {
		t.Fatalf("after reopen: %v, model %q", err, lastRequest(t, e.srv).Model)
	}
	// A new session given a model starts with it.
	other, err := turn(t, h2, harness.Turn{NewSession: true, Input: "hi", Model: "svc/big"})
	if err != nil || lastRequest(t, e.srv).Model != "big" {
		t.Fatal(err)
	}
	if _, err := turn(t, h2, harness.Turn{SessionID: other.SessionID, Input: "again"}); err != nil || lastRequest(t, e.srv).Model != "big" {
		t.Fatal(err)
	}
}

func TestThinkingLevels(t *testing.T) {
	e := newEnv(t)
	e.cfg.ReasoningEffort = "high" // new sessions think hard
	h := e.open(t)
	res, err := turn(t, h, harness.Turn{NewSession: true, Input: "a"})
	if err != nil {
		t.Fatal(err)
	}
	id := res.SessionID
	cases := []struct{ effort, sent string }{
		{"", "high"}, // the session's level
		{"none", "none"},
		{"minimal", "minimal"},
		{"low", "low"},
		{"medium", "medium"},
		{"xhigh", "xhigh"},
		{"max", "xhigh"},
		{"ultra", "xhigh"},
		{"", "high"}, // a turn's effort does not change the session's level
	}
	for _, c := range cases {
		if _, err := turn(t, h, harness.Turn{SessionID: id, Input: "x", ReasoningEffort: c.effort}); err != nil {
			t.Fatal(err)
		}
		req := lastRequest(t, e.srv)
		if req.ReasoningEffort != c.sent {
			t.Fatalf("effort %q sent %q, want %q", c.effort, req.ReasoningEffort, c.sent)
		}
		delegates := strings.Contains(req.Messages[0].Text(), "hand them to subagents")
		if delegates != (c.effort == "ultra") {
			t.Fatalf("effort %q: proactive subagents %v", c.effort, delegates)
		}
	}
	if Level("none") != "off" || Level("high") != "high" {
		t.Fatal("level mapping")
	}
	// Without a configured level nothing is sent.
	e2 := newEnv(t)
	h2 := e2.open(t)
	turn(t, h2, harness.Turn{Input: "x"})
	if got := lastRequest(t, e2.srv).ReasoningEffort; got != "" {
		t.Fatalf("sent %q with no level", got)
	}
}

func TestLabelsAndRows(t *testing.T) {
	e := newEnv(t)
	h := e.open(t)
	ctx := context.Background()
	a, _ := turn(t, h, harness.Turn{NewSession: true, Input: "first session"})
	b, _ := turn(t, h, harness.Turn{NewSession: true, Input: "second session"})
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(a.SessionID) {
		t.Fatalf("id %q", a.SessionID)
	}
	rows, err := h.Sessions(ctx)
	if err != nil || len(rows) != 2 || rows[0].ID != b.SessionID {
		t.Fatalf("rows %+v %v", rows, err)
	}
	for _, r := range rows {
		if r.Title != nil || r.MessageCount != nil || r.Preview != nil || r.LastActive == nil {
			t.Fatalf("row %+v", r)
		}
	}
	for _, r := range e.srv.Requests() {
		if r.Header.Get(harness.PurposeHeader) == "title" {
			t.Fatal("general-b generated a title")
		}
	}
	if ok, err := h.Rename(ctx, a.SessionID, "Research"); !ok || err != nil {
		t.Fatalf("%v %v", ok, err)
	}
	_, err = h.Rename(ctx, b.SessionID, "Research")
	if he, ok := harness.AsError(err); !ok || he.Code != "title_conflict" {
		t.Fatalf("conflict: %v", err)
	}
	if ok, err := h.Rename(ctx, "nope", "Other"); ok || err != nil {
		t.Fatalf("unknown: %v %v", ok, err)
	}
	rows, _ = h.Sessions(ctx)
	if *rows[1].Title != "Research" || rows[0].Title != nil {
		t.Fatalf("rows %+v", rows)
	}
	hist, _ := h.History(ctx, a.SessionID)
	if len(hist) != 2 || hist[0].Content != "first session" || hist[1].Content != "echo: first session" {
		t.Fatalf("history %+v", hist)
	}
}

func TestDeleteArchives(t *testing.T) {
	e := newEnv(t)
	h := e.open(t)
	ctx := context.Background()
	res, _ := turn(t, h, harness.Turn{NewSession: true, Input: "keep this on disk", Model: "svc/big"})
	id := res.SessionID
	h.Rename(ctx, id, "Archived one")
	if ok, err := h.Delete(ctx, id); !ok || err != nil {
		t.Fatalf("%v %v", ok, err)
	}
	if ok, _ := h.Delete(ctx, id); ok {
		t.Fatal("second delete reported deleted")
	}
	if rows, _ := h.Sessions(ctx); len(rows) != 0 {
		t.Fatalf("archived session listed %+v", rows)
	}
	if hist, err := h.History(ctx, id); err != nil || len(hist) != 0 {
		t.Fatalf("archived history readable %+v", hist)
	}
	// The transcript is still on disk.
	db, err := sql.Open("sqlite", filepath.Join(e.cfg.Home, ".svc-gateway", "general-b", "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var content string
	if err := db.QueryRow(`SELECT m.content FROM messages m JOIN sessions s ON s.key = m.session_key
		WHERE s.id = ? AND s.archived_at IS NOT NULL AND m.role = 'user'`, id).Scan(&content); err != nil || content != "keep this on disk" {
		t.Fatalf("archived transcript %q %v", content, err)
	}
	// The id starts a fresh thread with the default model, and the label is free.
	e.srv.Reset()
	if _, err := turn(t, h, harness.Turn{SessionID: id, Input: "new start"}); err != nil {
		t.Fatal(err)
	}
	req := lastRequest(t, e.srv)
	if len(req.Messages) != 2 || req.Model != "small" {
		t.Fatalf("fresh thread: %d messages, model %q", len(req.Messages), req.Model)
	}
	if ok, err := h.Rename(ctx, id, "Archived one"); !ok || err != nil {
		t.Fatalf("%v %v", ok, err)
	}
}

func TestUnconfiguredAndHealth(t *testing.T) {
	e := newEnv(t)
	h := e.open(t)
	if !h.Healthy(context.Background()) {
		t.Fatal("unhealthy")
	}
	e.cfg.ModelBaseURL = ""
	e.cfg.Home = t.TempDir()
	hn := e.open(t)
	if hn.Healthy(context.Background()) {
		t.Fatal("healthy without endpoint")
	}
	_, err := turn(t, hn, harness.Turn{Input: "x"})
	if he, ok := harness.AsError(err); !ok || he.Code != "agent_error" || !strings.Contains(he.Hint, "SVC_MODEL_BASE_URL") {
		t.Fatalf("%#v", err)
	}
	// context_length keeps its own kind on general-b.
	e2 := newEnv(t)
	h2 := e2.open(t)
	e2.srv.Script(modeltest.Reply{Status: 400, ErrorCode: "context_length_exceeded", ErrorMessage: "too long"})
	_, err = turn(t, h2, harness.Turn{Input: "x"})
	if he, ok := harness.AsError(err); !ok || he.Code != "context_length" {
		t.Fatalf("%v", err)
	}
}
