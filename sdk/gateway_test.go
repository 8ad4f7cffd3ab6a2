package sdk_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/svc-dev/svc/internal/gateway"
	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/harness/builtin"
	"github.com/svc-dev/svc/internal/harness/generala"
	"github.com/svc-dev/svc/internal/modeltest"
	"github.com/svc-dev/svc/sdk"
)

// startGateway serves a real gateway with general-a on a scripted model.
func startGateway(t *testing.T) (*sdk.Gateway, *modeltest.Server, string) {
	t.Helper()
	model, err := modeltest.Start(modeltest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { model.Close() })
	home := t.TempDir()
	h, err := generala.New(builtin.Config{Home: home, ModelBaseURL: model.URL, Model: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := gateway.DefaultConfig()
	cfg.Home = home
	gw, err := gateway.New(cfg, gateway.Registry{Default: harness.GeneralA, Harnesses: []harness.Harness{h}}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(func() { srv.Close(); gw.Close(); h.Close() })
	return sdk.New("http://unused", "sk_live_x").Gateway(srv.URL), model, home
}

// notTitle keeps the background title request from taking turn replies.
func notTitle(r modeltest.Request) bool { return r.Header.Get(harness.PurposeHeader) == "" }

func TestGatewayClient(t *testing.T) {
	g, model, home := startGateway(t)
	ctx := context.Background()

	model.Script(
		modeltest.Reply{Match: notTitle, Reasoning: "let me write it", ToolCalls: []modeltest.ToolCall{{Name: "write_file",
			Arguments: `{"path":"` + home + `/note.txt","content":"from the agent"}`}}},
		modeltest.Reply{Match: notTitle, Content: "Wrote the note."},
	)
	st, err := g.Stream(ctx, sdk.ResponseRequest{Input: "write a note"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var text, reasoning string
	last, err := st.Collect(func(ev sdk.Event) {
		names = append(names, ev.Name)
		switch ev.Name {
		case "response.output_text.delta":
			text += ev.Text()
		case "response.reasoning.delta":
			reasoning += ev.Text()
		}
	})
	st.Close()
	if err != nil || last.Name != "response.completed" || names[0] != "response.created" || text != "Wrote the note." || reasoning != "let me write it" {
		t.Fatalf("stream: %v %v text=%q reasoning=%q", err, names, text, reasoning)
	}
	rc, err := g.ReadFile(ctx, "~/note.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "from the agent" {
		t.Fatalf("file %q", b)
	}

	resp, err := g.Respond(ctx, sdk.ResponseRequest{Input: "again"})
	if err != nil || resp.Status != "completed" || resp.OutputText != "echo: again" || resp.Context == nil {
		t.Fatalf("respond: %v %+v", err, resp)
	}
	if _, err := g.WriteFile(ctx, "~/up/a.txt", strings.NewReader("abc"), true); err != nil {
		t.Fatal(err)
	}
	if _, err := g.WriteFile(ctx, "~/up/a.txt", strings.NewReader("x"), false); sdk.ErrorCode(err) != "file_exists" {
		t.Fatalf("overwrite=false: %v", err)
	}
	list, err := g.ListFiles(ctx, "~/up")
	if err != nil || len(list.Entries) != 1 || list.Entries[0].Name != "a.txt" || *list.Entries[0].Size != 3 {
		t.Fatalf("list: %v %+v", err, list)
	}
	h, err := g.Health(ctx, "")
	if err != nil || !h.OK || h.Agent != "general-a" {
		t.Fatalf("health: %v %+v", err, h)
	}
	if v, err := g.Version(ctx); err != nil || v == "" {
		t.Fatalf("version: %v %q", err, v)
	}
	if _, err := g.Health(ctx, "nope"); sdk.ErrorCode(err) != "validation_error" || err.(*sdk.Error).Param != "agent" {
		t.Fatalf("bad agent: %v", err)
	}
	rows, err := g.Sessions(ctx, "")
	if err != nil || len(rows) != 2 {
		t.Fatalf("sessions: %v %d", err, len(rows))
	}
	sess, err := g.Session(ctx, resp.SessionID, "")
	if err != nil || len(sess.History) != 2 || sess.History[0].Content != "again" {
		t.Fatalf("session: %v %+v", err, sess)
	}

	// Cancel a held turn and reattach to its record.
	hold := make(chan struct{})
	defer close(hold)
	model.Script(modeltest.Reply{Match: notTitle, Content: "never", Wait: hold})
	st, err = g.Stream(ctx, sdk.ResponseRequest{Input: "hold on", SessionID: resp.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	created, _ := st.Next()
	var c struct{ ID string }
	if err := json.Unmarshal(created.Data, &c); err != nil || c.ID == "" {
		t.Fatalf("created %s", created.Data)
	}
	_, err = g.Respond(ctx, sdk.ResponseRequest{Input: "busy?", SessionID: resp.SessionID})
	if e, ok := err.(*sdk.Error); !ok || e.Code != "session_busy" || e.ResponseID != c.ID {
		t.Fatalf("busy: %v", err)
	}
	if _, err := g.Cancel(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	last, err = st.Collect(nil)
	if err != nil || last.Name != "response.completed" {
		t.Fatalf("cancelled stream: %v %s", err, last.Name)
	}
	re, err := g.Reattach(ctx, c.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if last, err := re.Collect(nil); err != nil || last.Name != "response.completed" {
		t.Fatalf("reattach: %v", err)
	}
}
