package generala

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/modeltest"
)

type env struct {
	srv  *modeltest.Server
	home string
	cfg  Config
}

func newEnv(t *testing.T, mcfg modeltest.Config) *env {
	t.Helper()
	if mcfg.Models == nil {
		mcfg.Models = []modeltest.Model{{ID: "test-model", ContextWindow: 32768}, {ID: "other-model"}}
	}
	srv, err := modeltest.Start(mcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	home := t.TempDir()
	return &env{srv: srv, home: home, cfg: Config{Home: home, ModelBaseURL: srv.URL, APIKey: mcfg.APIKey, Model: "test-model"}}
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

// turn runs a turn and collects its events.
func turn(t *testing.T, h *Harness, tr harness.Turn) (harness.Result, []harness.Event, error) {
	t.Helper()
	var mu sync.Mutex
	var events []harness.Event
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := h.Run(ctx, tr, func(e harness.Event) error {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
		return nil
	})
	return res, events, err
}

func isTitle(r modeltest.Request) bool    { return r.Header.Get(harness.PurposeHeader) == "title" }
func notTitle(r modeltest.Request) bool   { return !isTitle(r) }
func titleReply(s string) modeltest.Reply { return modeltest.Reply{Match: isTitle, Content: s} }

var hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestTurnIsRecordedAndSurvivesReopen(t *testing.T) {
	e := newEnv(t, modeltest.Config{APIKey: "k"})
	h := e.open(t)
	e.srv.Script(
		modeltest.Reply{Match: notTitle, Reasoning: "The user greets me.", Content: "Hello! How can I help?",
			Usage: &modeltest.Usage{PromptTokens: 900, CompletionTokens: 40}},
		titleReply("Friendly greeting"),
	)
	res, events, err := turn(t, h, harness.Turn{NewSession: true, Input: "Hi there, agent"})
	if err != nil {
		t.Fatal(err)
	}
	if !hex32.MatchString(res.SessionID) {
		t.Fatalf("session id %q", res.SessionID)
	}
	if res.OutputText != "Hello! How can I help?" || len(events) == 0 {
		t.Fatalf("result %+v, %d events", res, len(events))
	}
	if res.Usage == nil || res.Usage.InputTokens != 900 || res.Usage.OutputTokens != 40 || res.Usage.Model != "test-model" {
		t.Fatalf("usage %+v", res.Usage)
	}
	// The window is the catalog's for this model.
	if res.Context == nil || *res.Context != (harness.Context{UsedTokens: 940, WindowTokens: 32768}) {
		t.Fatalf("context %+v", res.Context)
	}
	h.Wait()
	id := res.SessionID
	check := func(h *Harness) {
		t.Helper()
		rows, err := h.Sessions(context.Background())
		if err != nil || len(rows) != 1 {
			t.Fatalf("rows %+v %v", rows, err)
		}
		r := rows[0]
		if r.ID != id || *r.MessageCount != 2 || *r.Preview != "Hi there, agent" || r.Title == nil || *r.Title != "Friendly greeting" || *r.LastActive == 0 {
			t.Fatalf("row %+v", r)
		}
		hist, err := h.History(context.Background(), id)
		if err != nil || len(hist) != 2 {
			t.Fatalf("history %+v %v", hist, err)
		}
		u, a := hist[0], hist[1]
		if u.Role != "user" || u.Content != "Hi there, agent" || a.Role != "assistant" || a.Content != "Hello! How can I help?" || a.Thinking != "The user greets me." {
			t.Fatalf("history %+v", hist)
		}
		if hex32.MatchString(u.ID) || u.ID == a.ID || u.SessionID != id || u.CreatedAt < time.Now().Add(-time.Hour).UnixMilli() || a.CreatedAt < u.CreatedAt {
			t.Fatalf("message ids/times %+v", hist)
		}
	}
	check(h)
	h.Close()
	if _, err := os.Stat(filepath.Join(e.home, ".svc-gateway", "general-a", "sessions.db")); err != nil {
		t.Fatal(err)
	}
	h2 := e.open(t)
	check(h2)

	// The next turn replays the conversation to the model.
	e.srv.Reset()
	if _, _, err := turn(t, h2, harness.Turn{SessionID: id, Input: "What did I say?"}); err != nil {
		t.Fatal(err)
	}
	req := e.srv.Requests()[0]
	var texts []string
	for _, m := range req.Messages[1:] {
		texts = append(texts, m.Role+":"+m.Text())
	}
	want := "user:Hi there, agent|assistant:Hello! How can I help?|user:What did I say?"
	if strings.Join(texts, "|") != want {
		t.Fatalf("replayed %q", texts)
	}
	if req.Messages[0].Role != "system" || !strings.Contains(req.Messages[0].Text(), "general-a") {
		t.Fatalf("system prompt %q", req.Messages[0].Text())
	}
	if req.Header.Get("Authorization") != "Bearer k" || req.Header.Get(harness.PurposeHeader) != "" {
		t.Fatalf("headers %v", req.Header)
	}
}

func TestUnseenClientIDStartsAFreshThread(t *testing.T) {
	e := newEnv(t, modeltest.Config{})
	h := e.open(t)
	id := "0123456789abcdef0123456789abcdef"
	res, _, err := turn(t, h, harness.Turn{SessionID: id, Input: "first words"})
	if err != nil || res.SessionID != id || res.OutputText != "echo: first words" {
		t.Fatalf("%+v %v", res, err)
	}
	if n := len(e.srv.Requests()[0].Messages); n != 2 {
		t.Fatalf("fresh thread sent %d messages", n)
	}
	if hist, _ := h.History(context.Background(), id); len(hist) != 2 {
		t.Fatalf("history %+v", hist)
	}
}

func TestTitlesAreGeneratedUniqueAndFallBack(t *testing.T) {
	e := newEnv(t, modeltest.Config{})
	h := e.open(t)
	e.srv.Script(titleReply(`"Title: Planning a trip."`))
	a, _, _ := turn(t, h, harness.Turn{Input: "plan a trip to Lisbon"})
	h.Wait()
	e.srv.Script(titleReply("Planning a trip"))
	b, _, _ := turn(t, h, harness.Turn{Input: "plan another trip"})
	h.Wait()
	e.srv.Script(modeltest.Reply{Match: isTitle, Status: 500})
	c, _, _ := turn(t, h, harness.Turn{Input: "  what is   the weather like in Porto tomorrow morning?"})
	h.Wait()
	titles := map[string]string{}
	rows, _ := h.Sessions(context.Background())
	for _, r := range rows {
		if r.Title == nil {
			t.Fatalf("untitled %+v", r)
		}
		titles[r.ID] = *r.Title
	}
	if titles[a.SessionID] != "Planning a trip" || titles[b.SessionID] != "Planning a trip (2)" || titles[c.SessionID] != "what is the weather like in" {
		t.Fatalf("titles %q", titles)
	}
	var titleReqs int
	for _, r := range e.srv.Requests() {
		if isTitle(r) {
			titleReqs++
			if len(r.Tools) != 0 || !strings.Contains(r.LastUser(), "User: ") || r.Model != "test-model" {
				t.Fatalf("title request %+v", r)
			}
		}
	}
	if titleReqs != 3 {
		t.Fatalf("%d title requests", titleReqs)
	}
	// A second turn does not retitle.
	e.srv.Reset()
	turn(t, h, harness.Turn{SessionID: a.SessionID, Input: "more"})
	h.Wait()
	for _, r := range e.srv.Requests() {
		if isTitle(r) {
			t.Fatal("titled an already titled session")
		}
	}
}

func TestRenameAndDelete(t *testing.T) {
	e := newEnv(t, modeltest.Config{})
	h := e.open(t)
	e.srv.Script(titleReply("Alpha"))
	a, _, _ := turn(t, h, harness.Turn{Input: "a"})
	h.Wait()
	e.srv.Script(titleReply("Beta"))
	b, _, _ := turn(t, h, harness.Turn{Input: "b"})
	h.Wait()
	ctx := context.Background()

	errCode := func(err error) string {
		if he, ok := harness.AsError(err); ok {
			return he.Code + "/" + he.Param
		}
		return "<" + err.Error() + ">"
	}
	if _, err := h.Rename(ctx, b.SessionID, "Alpha"); err == nil || errCode(err) != "title_conflict/title" {
		t.Fatalf("conflict: %v", err)
	}
	if _, err := h.Rename(ctx, b.SessionID, strings.Repeat("x", MaxTitle+1)); err == nil || errCode(err) != "validation_error/title" {
		t.Fatalf("too long: %v", err)
	}
	if _, err := h.Rename(ctx, b.SessionID, "   "); err == nil || errCode(err) != "validation_error/title" {
		t.Fatalf("empty: %v", err)
	}
	if ok, err := h.Rename(ctx, b.SessionID, strings.Repeat("é", MaxTitle)); !ok || err != nil {
		t.Fatalf("max length in characters: %v %v", ok, err)
	}
	if ok, err := h.Rename(ctx, b.SessionID, "  Gamma  "); !ok || err != nil {
		t.Fatalf("rename: %v %v", ok, err)
	}
	if ok, err := h.Rename(ctx, "ffffffffffffffffffffffffffffffff", "Delta"); ok || err != nil {
		t.Fatalf("rename unknown: %v %v", ok, err)
	}
	rows, _ := h.Sessions(ctx)
	if len(rows) != 2 || *rows[0].Title != "Gamma" {
		t.Fatalf("rows %+v", rows)
	}
	if ok, err := h.Delete(ctx, a.SessionID); !ok || err != nil {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if ok, _ := h.Delete(ctx, a.SessionID); ok {
		t.Fatal("second delete reported deleted")
	}
	if hist, _ := h.History(ctx, a.SessionID); len(hist) != 0 {
		t.Fatalf("deleted history %+v", hist)
	}
	if rows, _ := h.Sessions(ctx); len(rows) != 1 || rows[0].ID != b.SessionID {
		t.Fatalf("rows after delete %+v", rows)
	}
	// The freed title can be taken.
	if ok, err := h.Rename(ctx, b.SessionID, "Alpha"); !ok || err != nil {
		t.Fatalf("%v %v", ok, err)
	}
}

func TestListShowsTheHundredMostRecent(t *testing.T) {
	e := newEnv(t, modeltest.Config{})
	h := e.open(t)
	var first string
	for i := range ListLimit + 3 {
		res, _, err := turn(t, h, harness.Turn{Input: "n"})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = res.SessionID
		}
	}
	h.Wait()
	// Activity moves the oldest session to the top.
	last, _, _ := turn(t, h, harness.Turn{SessionID: first, Input: "again"})
	rows, _ := h.Sessions(context.Background())
	if len(rows) != ListLimit || rows[0].ID != last.SessionID || *rows[0].MessageCount != 4 {
		t.Fatalf("%d rows, first %+v", len(rows), rows[0])
	}
	for i := 1; i < len(rows); i++ {
		if *rows[i].LastActive > *rows[i-1].LastActive {
			t.Fatalf("rows out of order at %d", i)
		}
	}
}
