package e2e

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/modeltest"
	"github.com/svc-dev/svc/internal/svctest"
	"github.com/svc-dev/svc/internal/sysimage/sysimagetest"
	"github.com/svc-dev/svc/sdk"
)

// notTitle keeps general-a's background title request from taking the
// replies scripted for turns.
func notTitle(r modeltest.Request) bool { return r.Header.Get(harness.PurposeHeader) == "" }

// waitHealthy polls the gateway's readiness through the edge.
func waitHealthy(t *testing.T, g *sdk.Gateway) sdk.Health {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var last sdk.Health
	var err error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		last, err = g.Health(ctx, "")
		cancel()
		if err == nil && last.Healthy {
			return last
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("gateway never healthy: %v %+v", err, last)
	return last
}

// TestSystemTemplateChat is the whole path a new user takes: svcd with a
// model upstream, an instance of svc-general-small, readiness through the
// edge, a streamed turn whose model writes a file with a tool, the file
// read back through the files API, stop and start keeping it, a cancelled
// turn, svc chat, delete.
func TestSystemTemplateChat(t *testing.T) {
	model, err := modeltest.Start(modeltest.Config{APIKey: "upstream-key", Models: []modeltest.Model{{ID: "scripted-1", ContextWindow: 64000}}})
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	env := svctest.New(t, svctest.Options{ModelUpstream: model.URL, ModelAPIKey: "upstream-key", Model: "scripted-1"})
	sysimagetest.Publish(t, env.Server.Store, env.Server.Registry, "svc-general-small")
	ctx := context.Background()

	in, err := env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "svc-general-small"})
	if err != nil {
		t.Fatal(err)
	}
	if in.Status != "running" || in.ImageDigest == nil || !strings.HasPrefix(*in.ImageRef, "svc/svc-general-small:") {
		t.Fatalf("created %+v", in)
	}
	g := env.Client.Gateway(in.URL)
	if h := waitHealthy(t, g); h.Agent != "general-a" {
		t.Fatalf("health %+v", h)
	}

	// A streamed turn: the model writes a file with a tool, then answers.
	const path = "/home/user/.svc-gateway/workspace/notes/hello.txt"
	model.Script(
		modeltest.Reply{Match: notTitle, Reasoning: "I will write the file.", ToolCalls: []modeltest.ToolCall{{Name: "write_file",
			Arguments: `{"path":"` + path + `","content":"hello from the agent\n"}`}}},
		modeltest.Reply{Match: notTitle, Content: "I wrote notes/hello.txt."},
	)
	st, err := g.Stream(ctx, sdk.ResponseRequest{Input: "write a hello file"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var text string
	last, err := st.Collect(func(ev sdk.Event) {
		names = append(names, ev.Name)
		if ev.Name == "response.output_text.delta" {
			text += ev.Text()
		}
	})
	st.Close()
	if err != nil || last.Name != "response.completed" || text != "I wrote notes/hello.txt." {
		t.Fatalf("turn: %v %v %q", err, names, text)
	}
	for _, want := range []string{"response.created", "response.reasoning.delta", "response.tool_call.started", "response.tool_call.completed"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Fatalf("events %v lack %s", names, want)
		}
	}
	var done struct {
		Usage   *sdk.Usage         `json:"usage"`
		Context *sdk.ContextWindow `json:"context"`
	}
	json.Unmarshal(last.Data, &done)
	if done.Usage == nil || done.Usage.InputTokens == 0 || done.Context == nil || done.Context.WindowTokens != 64000 {
		t.Fatalf("completed payload %s", last.Data)
	}
	readFile := func() string {
		rc, err := g.ReadFile(ctx, "~/.svc-gateway/workspace/notes/hello.txt")
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		defer rc.Close()
		b, _ := io.ReadAll(rc)
		return string(b)
	}
	if got := readFile(); got != "hello from the agent\n" {
		t.Fatalf("file %q", got)
	}
	// The instance's calls went through the managed model: svcd's own key
	// upstream, recorded per call with tokens.
	for _, r := range model.Requests() {
		if r.Header.Get("Authorization") != "Bearer upstream-key" || r.Model != "scripted-1" {
			t.Fatalf("upstream saw %q model %q", r.Header.Get("Authorization"), r.Model)
		}
	}
	calls, err := env.Server.Store.ModelCalls(ctx, in.ID)
	if err != nil || len(calls) < 2 || calls[0].InputTokens == 0 || calls[0].OutputTokens == 0 || calls[0].Model != "scripted-1" {
		t.Fatalf("recorded calls: %v %+v", err, calls)
	}

	// Stop and start: the file is on the instance disk.
	if _, err := env.Client.StopInstance(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Client.StartInstance(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	waitHealthy(t, g)
	if got := readFile(); got != "hello from the agent\n" {
		t.Fatalf("file after stop/start %q", got)
	}

	// Cancel a running turn: it settles cancelled, the stream ends with
	// response.completed.
	hold := make(chan struct{})
	defer close(hold)
	model.Script(modeltest.Reply{Match: notTitle, Content: "never sent", Wait: hold})
	st, err = g.Stream(ctx, sdk.ResponseRequest{Input: "take your time"})
	if err != nil {
		t.Fatal(err)
	}
	created, err := st.Next()
	var c struct{ ID, SessionID string }
	if err != nil || created.Name != "response.created" || json.Unmarshal(created.Data, &c) != nil || c.ID == "" {
		t.Fatalf("first event: %v %s %s", err, created.Name, created.Data)
	}
	// Cancel once the turn is inside its model call.
	for deadline := time.Now().Add(30 * time.Second); model.Pending() > 0; {
		if time.Now().After(deadline) {
			t.Fatal("the held turn never called the model")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := g.Cancel(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	last, err = st.Collect(nil)
	st.Close()
	if err != nil || last.Name != "response.completed" {
		if rc, lerr := env.Client.Logs(ctx, in.ID, 60, false); lerr == nil {
			b, _ := io.ReadAll(rc)
			t.Logf("console:\n%s", b)
		}
		t.Fatalf("cancelled stream: %v %s", err, last.Name)
	}
	re, err := g.Reattach(ctx, c.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	re.Collect(nil)
	re.Close()
	got, err := g.Cancel(ctx, c.ID) // a no-op on a terminal response
	if err != nil || got.Status != "cancelled" {
		t.Fatalf("after cancel: %v %+v", err, got)
	}

	// svc chat streams a turn to the terminal and continues a session.
	model.Script(modeltest.Reply{Match: notTitle, Content: "Hi from chat."})
	out := svcCLI(t, env, "chat", in.ID, "hello", "there")
	if !strings.Contains(out, "Hi from chat.") || !strings.Contains(out, "--session ") {
		t.Fatalf("svc chat: %q", out)
	}
	sid := strings.Fields(out[strings.Index(out, "--session ")+len("--session "):])[0]
	sid = strings.TrimRight(sid, ")")
	model.Script(modeltest.Reply{Match: func(r modeltest.Request) bool {
		// The second turn carries the first exchange.
		return notTitle(r) && strings.Contains(messagesText(r), "Hi from chat.")
	}, Content: "Continued."})
	if out := svcCLI(t, env, "chat", in.ID, "--session", sid, "and again"); !strings.Contains(out, "Continued.") {
		reqs := model.Requests()
		for _, r := range reqs[max(0, len(reqs)-3):] {
			t.Logf("request %s: %q", r.Header.Get(harness.PurposeHeader), messagesText(r))
		}
		t.Fatalf("svc chat --session %s: %q", sid, out)
	}

	if err := env.Client.DeleteInstance(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
}

func messagesText(r modeltest.Request) string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Text())
		b.WriteString("\n")
	}
	return b.String()
}

// svcCLI runs the built svc binary against env and returns its output.
func svcCLI(t *testing.T, env *svctest.Env, args ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "svc")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/svc-dev/svc/cmd/svc").CombinedOutput(); err != nil {
		t.Fatalf("build svc: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "SVC_URL="+env.Server.URL, "SVC_API_KEY="+env.Client.Key)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("svc %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestManagedModelUnconfigured: without an upstream, a turn fails with
// agent_error and a hint that says how to configure one.
func TestManagedModelUnconfigured(t *testing.T) {
	env := svctest.New(t, svctest.Options{})
	sysimagetest.Publish(t, env.Server.Store, env.Server.Registry, "svc-general-small")
	ctx := context.Background()
	in, err := env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "svc-general-small"})
	if err != nil {
		t.Fatal(err)
	}
	g := env.Client.Gateway(in.URL)
	var resp sdk.Response
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err = g.Respond(ctx, sdk.ResponseRequest{Input: "hello"})
		if err == nil {
			break
		}
		time.Sleep(300 * time.Millisecond) // the gateway is still booting
	}
	if err != nil || resp.Status != "failed" || resp.Error == nil || resp.Error.Code != "agent_error" ||
		!strings.Contains(resp.Error.Hint, "--model-upstream") {
		t.Fatalf("turn without upstream: %v %+v %+v", err, resp, resp.Error)
	}
}
