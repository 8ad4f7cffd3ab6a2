// Package harnesstest is the conformance suite every harness passes: real
// HTTP through the gateway (internal/gateway) to the harness, which talks
// to a scripted model server (internal/modeltest). A harness package runs
// it from its own test:
//
//	func TestConformance(t *testing.T) {
//		harnesstest.Run(t, harnesstest.Profile{ID: harness.GeneralA, New: ..., ShellTool: ...})
//	}
package harnesstest

import (
	"log/slog"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/gateway"
	"github.com/svc-dev/svc/internal/gateway/gatewaytest"
	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/modeltest"
)

// Profile describes the harness under test: how to build it and the facts
// in which harnesses legitimately differ.
type Profile struct {
	// ID is the harness id the gateway routes to (harness.GeneralA, ...).
	ID string
	// New builds the harness. Its model endpoint is the scripted server at
	// modelBaseURL (OpenAI-style, ending in /v1, no key required), whose
	// catalog is Models and whose first model is the default; home is the
	// agent's home, a fresh directory per case. Stop it with t.Cleanup.
	New func(t *testing.T, modelBaseURL, home string) harness.Harness
	// Models is the scripted server's catalog (default: "test-model" with
	// a 128000-token window).
	Models []modeltest.Model

	// ShellTool names the tool that runs a shell command; ShellArgs gives
	// its JSON arguments for a command.
	ShellTool string
	ShellArgs func(command string) string
	// WriteFileTool names the tool that writes a file; WriteFileArgs gives
	// its JSON arguments.
	WriteFileTool string
	WriteFileArgs func(path, content string) string

	// Titles: the harness generates a title after the first completed
	// exchange (general-a), with a model request carrying
	// harness.PurposeHeader "title". Otherwise titles stay null until
	// renamed (general-b).
	Titles bool
	// Renames: PATCH sets a title, unique per harness. False expects
	// 405 rename_unsupported (coding-c).
	Renames bool
	// MessageCount and Preview: session rows report them; otherwise null.
	MessageCount bool
	Preview      bool
	// MintsSessionIDs: the harness issues its own session ids, so an
	// unissued session_id is a 400 (coding-b, coding-c, coding-d).
	MintsSessionIDs bool
	// StopCommands are inputs that cancel without a run (general-b:
	// "stop", "exit").
	StopCommands []string
	// ContextLengthCode is the turn code for a model context-length error
	// (general-b: context_length; agent_error for a harness that reports
	// no kind). Empty means agent_error.
	ContextLengthCode string
	// ContextWindow is the window_tokens completed turns report; 0 accepts
	// any positive window.
	ContextWindow int64
}

// Run runs every case against p. Each case gets its own model server,
// home, harness and gateway.
func Run(t *testing.T, p Profile) {
	if p.New == nil || p.ID == "" || p.ShellTool == "" || p.ShellArgs == nil {
		t.Fatal("harnesstest: Profile needs ID, New, ShellTool and ShellArgs")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, p) })
	}
}

var cases = []struct {
	name string
	run  func(*testing.T, Profile)
}{
	{"events", testEvents},
	{"json", testJSON},
	{"tool calls", testToolCalls},
	{"attachments", testAttachments},
	{"failed turn", testFailedTurn},
	{"model errors", testModelErrors},
	{"cancel mid-tool", testCancelMidTool},
	{"stop commands", testStopCommands},
	{"session busy", testSessionBusy},
	{"replay after reconnect", testReplay},
	{"last event id", testLastEventID},
	{"synthesized replay", testSynthesizedReplay},
	{"record expiry", testRecordExpiry},
	{"limits", testLimits},
	{"efforts and echo", testEffortsAndEcho},
	{"sessions", testSessions},
	{"session ids", testSessionIDs},
	{"health and models", testHealth},
}

// rig is one case's world: scripted model, harness, gateway, client.
type rig struct {
	*gatewaytest.Client
	t     *testing.T
	p     Profile
	model *modeltest.Server
	h     harness.Harness
	home  string
}

type rigOption func(*gateway.Config, *modeltest.Config)

// newRig starts the model server, the harness and a gateway whose
// intervals are shortened for tests.
func newRig(t *testing.T, p Profile, opts ...rigOption) *rig {
	t.Helper()
	mcfg := modeltest.Config{Models: p.Models, Fallback: fallback(nil)}
	cfg := gateway.DefaultConfig()
	cfg.Tick = 20 * time.Millisecond
	cfg.KeepAlive = 50 * time.Millisecond
	for _, o := range opts {
		o(&cfg, &mcfg)
	}
	model, err := modeltest.Start(mcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { model.Close() })
	home := t.TempDir()
	cfg.Home = home
	os.MkdirAll(home+"/.svc-gateway/workspace", 0o755)
	h := p.New(t, model.URL, home)
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	gw, err := gateway.New(cfg, gateway.Registry{Default: p.ID, Harnesses: []harness.Harness{h}}, log)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		gw.Close()
	})
	return &rig{Client: gatewaytest.New(t, srv.URL), t: t, p: p, model: model, h: h, home: home}
}

// testWriter sends the gateway's warnings to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// isTurn matches the model requests of the turn itself, so side requests
// (titles, subagents) do not consume the replies a case scripts.
func isTurn(r modeltest.Request) bool { return r.Header.Get(harness.PurposeHeader) == "" }

// turn marks scripted replies as answers to turn requests only.
func turn(replies ...modeltest.Reply) []modeltest.Reply {
	for i := range replies {
		replies[i].Match = isTurn
	}
	return replies
}

// fallback answers unscripted requests: titles get a fixed title, turns
// get turnReply (default: an echo of the last user message).
func fallback(turnReply func(modeltest.Request) modeltest.Reply) func(modeltest.Request) modeltest.Reply {
	return func(r modeltest.Request) modeltest.Reply {
		switch {
		case r.Header.Get(harness.PurposeHeader) == "title":
			return modeltest.Reply{Content: "Scripted Title"}
		case isTurn(r) && turnReply != nil:
			return turnReply(r)
		}
		return modeltest.Reply{Content: "echo: " + r.LastUser()}
	}
}

func withConfig(f func(*gateway.Config)) rigOption {
	return func(c *gateway.Config, _ *modeltest.Config) { f(c) }
}

func withTurnReply(f func(modeltest.Request) modeltest.Reply) rigOption {
	return func(_ *gateway.Config, m *modeltest.Config) { m.Fallback = fallback(f) }
}
