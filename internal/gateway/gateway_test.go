package gateway

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/gateway/gatewaytest"
	"github.com/svc-dev/svc/internal/harness"
)

// Shorthands for the shared test client's helpers.
var (
	wantError  = gatewaytest.WantError
	names      = gatewaytest.Names
	eventually = gatewaytest.Eventually
)

type sseEvent = gatewaytest.Event

// env is a gateway on a real loopback server with a scripted general-a as
// the default harness; general-b is provisioned only when asked.
type env struct {
	*gatewaytest.Client
	t    *testing.T
	gw   *Server
	h    *scriptHarness
	home string
	cfg  Config
}

// testConfig shortens the intervals that tests wait on; expiry stays long
// unless a test shortens it.
func testConfig(t *testing.T) Config {
	cfg := DefaultConfig()
	cfg.Home = t.TempDir()
	cfg.Tick = 10 * time.Millisecond
	cfg.KeepAlive = 10 * time.Millisecond
	cfg.HealthTimeout = time.Second
	return cfg
}

func newEnv(t *testing.T, cfg Config, extra ...harness.Harness) *env {
	t.Helper()
	h := newScriptHarness(harness.GeneralA)
	gw, err := New(cfg, Registry{Default: harness.GeneralA, Harnesses: append([]harness.Harness{h}, extra...)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		gw.Close()
	})
	return &env{Client: gatewaytest.New(t, srv.URL), t: t, gw: gw, h: h, home: cfg.Home, cfg: cfg}
}
