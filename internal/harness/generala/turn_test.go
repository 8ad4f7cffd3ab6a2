package generala

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/modeltest"
)

func TestAttachedFilesReachTheModel(t *testing.T) {
	e := newEnv(t, modeltest.Config{})
	e.cfg.AttachClip = 100
	h := e.open(t)
	dir := t.TempDir()
	small := filepath.Join(dir, "notes.md")
	big := filepath.Join(dir, "big.log")
	bin := filepath.Join(dir, "blob.bin")
	os.WriteFile(small, []byte("# Notes\nbuy milk"), 0o644)
	os.WriteFile(big, []byte(strings.Repeat("L", 500)), 0o644)
	os.WriteFile(bin, []byte{0, 1, 2, 3}, 0o644)
	res, _, err := turn(t, h, harness.Turn{Input: "summarise these", Files: []string{small, big, bin}})
	if err != nil {
		t.Fatal(err)
	}
	sent := e.srv.Requests()[0].LastUser()
	for _, want := range []string{"summarise these", "[Attached file: " + small + "]", "# Notes\nbuy milk",
		strings.Repeat("L", 100) + "…", "the file has 500 bytes", "(binary file, 4 bytes"} {
		if !strings.Contains(sent, want) {
			t.Fatalf("model input lacks %q:\n%s", want, sent)
		}
	}
	if strings.Contains(sent, strings.Repeat("L", 101)) {
		t.Fatal("large file not clipped")
	}
	hist, _ := h.History(context.Background(), res.SessionID)
	want := "summarise these\n\n[Attached file: " + small + "]\n\n[Attached file: " + big + "]\n\n[Attached file: " + bin + "]"
	if hist[0].Content != want {
		t.Fatalf("transcript input %q", hist[0].Content)
	}
	// The next turn replays what the model saw, contents included.
	e.srv.Reset()
	turn(t, h, harness.Turn{SessionID: res.SessionID, Input: "and?"})
	if !strings.Contains(e.srv.Requests()[0].Messages[1].Text(), "buy milk") {
		t.Fatal("replay lost the attached content")
	}
}

func TestReasoningEffort(t *testing.T) {
	cases := []struct{ configured, turn, sent string }{
		{"", "", ""},
		{"low", "", "low"},
		{"low", "high", "high"},
		{"", "none", "none"},
		{"", "minimal", "minimal"},
		{"", "xhigh", "xhigh"},
		{"", "max", "xhigh"},
		{"medium", "ultra", "xhigh"},
	}
	for _, c := range cases {
		t.Run(c.configured+"/"+c.turn, func(t *testing.T) {
			e := newEnv(t, modeltest.Config{})
			e.cfg.ReasoningEffort = c.configured
			h := e.open(t)
			if _, _, err := turn(t, h, harness.Turn{Input: "x", ReasoningEffort: c.turn}); err != nil {
				t.Fatal(err)
			}
			if got := e.srv.Requests()[0].ReasoningEffort; got != c.sent {
				t.Fatalf("reasoning_effort %q, want %q", got, c.sent)
			}
		})
	}
}

func TestModelAndProviderPerTurn(t *testing.T) {
	e := newEnv(t, modeltest.Config{})
	h := e.open(t)
	res, _, err := turn(t, h, harness.Turn{Input: "x", Model: "other-model", Provider: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := turn(t, h, harness.Turn{SessionID: res.SessionID, Input: "y"}); err != nil {
		t.Fatal(err)
	}
	reqs := e.srv.Requests()
	var models []string
	for _, r := range reqs {
		if !isTitle(r) {
			models = append(models, r.Model)
		}
	}
	if strings.Join(models, ",") != "other-model,test-model" {
		t.Fatalf("models %v (the turn's model must not stick on general-a)", models)
	}
	// The window follows the turn's model: other-model is listed unsized.
	if res.Context.WindowTokens != 128000 {
		t.Fatalf("window %d", res.Context.WindowTokens)
	}
	_, _, err = turn(t, h, harness.Turn{Input: "x", Provider: "openai"})
	if he, ok := harness.AsError(err); !ok || he.Code != "agent_error" || he.Param != "provider" {
		t.Fatalf("unknown provider: %v", err)
	}
}

func TestFailedTurnsAndTheTranscript(t *testing.T) {
	e := newEnv(t, modeltest.Config{})
	h := e.open(t)
	ctx := context.Background()
	// Failing before anything happened leaves no trace.
	e.srv.Script(modeltest.Reply{Status: 402, ErrorMessage: "wallet balance $0.00 is below the minimum"})
	res, _, err := turn(t, h, harness.Turn{Input: "hello"})
	he, ok := harness.AsError(err)
	if !ok || he.Code != "quota_exhausted" || he.Message != "wallet balance $0.00 is below the minimum" {
		t.Fatalf("err %v", err)
	}
	if rows, _ := h.Sessions(ctx); len(rows) != 0 {
		t.Fatalf("failed turn created %+v", rows)
	}
	// context_length is general-b's own kind: general-a says agent_error
	// with the endpoint's message.
	e.srv.Script(modeltest.Reply{Status: 400, ErrorCode: "context_length_exceeded", ErrorMessage: "maximum context length is 8192 tokens"})
	_, _, err = turn(t, h, harness.Turn{SessionID: res.SessionID, Input: "long"})
	if he, ok := harness.AsError(err); !ok || he.Code != "agent_error" || he.Message != "maximum context length is 8192 tokens" || he.Hint == "" {
		t.Fatalf("err %#v", err)
	}
	// Failing after a tool ran records the input and the work.
	e.srv.Script(
		modeltest.Reply{Content: "Writing.", ToolCalls: []modeltest.ToolCall{{Name: "write_file", Arguments: `{"path":"out.txt","content":"x"}`}}},
		modeltest.Reply{Status: 429, ErrorMessage: "slow down"},
	)
	_, _, err = turn(t, h, harness.Turn{SessionID: res.SessionID, Input: "write it"})
	if he, ok := harness.AsError(err); !ok || he.Code != "rate_limited" {
		t.Fatalf("err %v", err)
	}
	hist, _ := h.History(ctx, res.SessionID)
	if len(hist) != 2 || hist[0].Content != "write it" || hist[1].Content != "Writing." {
		t.Fatalf("history %+v", hist)
	}
}

func TestCancelKeepsTheOutputSoFar(t *testing.T) {
	e := newEnv(t, modeltest.Config{})
	h := e.open(t)
	hold := make(chan struct{})
	defer close(hold)
	e.srv.Script(modeltest.Reply{Content: "Partial answer", ToolCalls: []modeltest.ToolCall{{Name: "shell", Arguments: `{"command":"sleep 30"}`}}})
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	var once sync.Once
	done := make(chan struct{})
	var res harness.Result
	var err error
	go func() {
		defer close(done)
		res, err = h.Run(ctx, harness.Turn{Input: "sleep"}, func(ev harness.Event) error {
			if ev.Name == harness.ToolCallStarted {
				once.Do(func() { close(started) })
			}
			return nil
		})
	}()
	<-started
	cancel()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if !errors.Is(err, context.Canceled) || res.OutputText != "Partial answer" || res.Context != nil {
		t.Fatalf("res %+v err %v", res, err)
	}
	h.Wait()
	hist, _ := h.History(context.Background(), res.SessionID)
	if len(hist) != 2 || hist[1].Content != "Partial answer" {
		t.Fatalf("history %+v", hist)
	}
	rows, _ := h.Sessions(context.Background())
	if len(rows) != 1 || rows[0].Title != nil {
		t.Fatalf("a cancelled turn is no completed exchange; rows %+v", rows)
	}
}

func TestConcurrentSessions(t *testing.T) {
	e := newEnv(t, modeltest.Config{})
	h := e.open(t)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	ids := make([]string, 20)
	for i := range 20 {
		wg.Go(func() {
			for j := range 3 {
				res, err := h.Run(context.Background(), harness.Turn{SessionID: ids[i], Input: fmt.Sprintf("s%d t%d", i, j)}, func(harness.Event) error { return nil })
				if err != nil {
					errs <- err
					return
				}
				ids[i] = res.SessionID
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	h.Wait()
	for i, id := range ids {
		hist, _ := h.History(context.Background(), id)
		if len(hist) != 6 || hist[4].Content != fmt.Sprintf("s%d t2", i) || hist[5].Content != fmt.Sprintf("echo: s%d t2", i) {
			t.Fatalf("session %d history %+v", i, hist)
		}
	}
}

func TestModelsAndHealth(t *testing.T) {
	e := newEnv(t, modeltest.Config{APIKey: "k"})
	e.cfg.Model = "other-model"
	h := e.open(t)
	ctx := context.Background()
	models, err := h.Models(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []harness.Model{
		{ID: "other-model", Provider: "svc", ContextWindow: 128000, Default: true},
		{ID: "test-model", Provider: "svc", ContextWindow: 32768},
	}
	if fmt.Sprint(models) != fmt.Sprint(want) {
		t.Fatalf("models %+v", models)
	}
	if !h.Healthy(ctx) {
		t.Fatal("unhealthy with a working endpoint")
	}

	// A wrong key: the endpoint answers 401, so turns would fail.
	bad := *e
	bad.cfg.APIKey = "wrong"
	bad.cfg.Home = t.TempDir()
	if hb := bad.open(t); hb.Healthy(ctx) {
		t.Fatal("healthy with a rejected key")
	}

	// Nothing listening.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	down := *e
	down.cfg.ModelBaseURL = "http://" + addr + "/v1"
	down.cfg.Home = t.TempDir()
	if hd := down.open(t); hd.Healthy(ctx) {
		t.Fatal("healthy with no endpoint listening")
	}

	// Not configured at all: unhealthy, and turns say which env to set.
	none := *e
	none.cfg.ModelBaseURL = ""
	none.cfg.Home = t.TempDir()
	hn := none.open(t)
	if hn.Healthy(ctx) {
		t.Fatal("healthy without an endpoint")
	}
	_, _, err = turn(t, hn, harness.Turn{Input: "x"})
	if he, ok := harness.AsError(err); !ok || he.Code != "agent_error" || !strings.Contains(he.Hint, "SVC_MODEL_BASE_URL") {
		t.Fatalf("err %#v", err)
	}
}
