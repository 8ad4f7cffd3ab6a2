package e2e

import (
	"context"
	"log/slog"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/server"
	"github.com/svc-dev/svc/internal/svctest"
	"github.com/svc-dev/svc/sdk"
)

// TestEdgeAlone: `svcd edge` on the data directory of a running serve
// routes and authenticates the same, wakes instances, and its traffic
// (flushed to the store) keeps instances awake for serve's idle watcher.
func TestEdgeAlone(t *testing.T) {
	env := svctest.New(t, svctest.Options{MinIdleTimeout: 1, WakeTimeout: time.Minute})
	ctx := context.Background()
	env.Template("web", svctest.WebApp(8000), 8000)
	in, err := env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "web", AutoSleep: ptr(true), IdleTimeoutSeconds: ptr(3)})
	if err != nil {
		t.Fatal(err)
	}
	alone, err := server.StartEdge(ctx, server.Config{DataDir: env.DataDir, Listen: "127.0.0.1:0", AppsDomain: "localhost",
		Network: "svc", StopGrace: 2 * time.Second, BootTimeout: 15 * time.Second, WakeTimeout: time.Minute,
		ActivityFlushEvery: 200 * time.Millisecond, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close()
	u, _ := url.Parse(alone.URL)
	viaAlone := "http://" + in.ID + ".localhost:" + u.Port()
	hc := plainClient()
	key := map[string]string{"X-Svc-Key": env.Client.Key}

	if code, b, _ := fetch(t, hc, "GET", viaAlone+"/", key, nil); code != 200 || b != "hello from port 8000\n" {
		t.Fatalf("through svcd edge: %d %q", code, b)
	}
	if code, b, _ := fetch(t, hc, "GET", viaAlone+"/", nil, nil); code != 401 || strings.TrimSpace(b) != `{"error":"unauthorized"}` {
		t.Fatalf("no key through svcd edge: %d %q", code, b)
	}
	// The API is not served there.
	if code, _, _ := fetch(t, hc, "GET", alone.URL+"/v1/instances", map[string]string{"Authorization": "Bearer " + env.Client.Key}, nil); code != 404 {
		t.Fatalf("API on svcd edge: %d", code)
	}
	// Signed URLs minted by serve open on the separate edge (one secret).
	su, err := env.Client.SignedURL(ctx, in.ID, sdk.SignedURLRequest{})
	if err != nil {
		t.Fatal(err)
	}
	token := su.URL[strings.Index(su.URL, "?"):]
	if code, _, _ := fetch(t, hc, "GET", viaAlone+"/"+token, nil, nil); code != 302 {
		t.Fatalf("signed URL on svcd edge: %d", code)
	}

	// Traffic only through the separate edge, for three idle timeouts:
	// serve's watcher sees it and keeps the instance awake.
	for end := time.Now().Add(9 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if code, _, _ := fetch(t, hc, "GET", viaAlone+"/", key, nil); code != 200 {
			t.Fatalf("request %d", code)
		}
		if got, _ := env.Client.Instance(ctx, in.ID); got.Status != "running" {
			t.Fatalf("slept while traffic went through svcd edge: %s", got.Status)
		}
	}
	// (A sleep would have been undone by the next request: the boot count
	// says none happened.)
	if n := boots(t, env, in.ID); n != 1 {
		t.Fatalf("the instance slept and woke %d times under traffic", n-1)
	}
	// Idle, it sleeps; the separate edge wakes it.
	waitStatus(t, env, in.ID, "sleeping", 30*time.Second)
	if code, b, _ := fetch(t, hc, "GET", viaAlone+"/", key, nil); code != 200 || b != "hello from port 8000\n" {
		t.Fatalf("wake through svcd edge: %d %q", code, b)
	}
	if got, _ := env.Client.Instance(ctx, in.ID); got.Status != "running" {
		t.Fatalf("after the wake: %s", got.Status)
	}

	// A wake that has to recreate the container (it vanished while the
	// instance slept) gives it the same platform env as serve would,
	// the managed model's address and the instance's token included.
	modelEnv := func() string {
		t.Helper()
		res, err := env.Client.Exec(ctx, in.ID, sdk.ExecRequest{Command: `printf '%s|%s' "$SVC_MODEL_BASE_URL" "$SVC_MODEL_API_KEY"`})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("read the model env: %v %+v", err, res)
		}
		return res.Stdout
	}
	before := modelEnv()
	if !strings.HasPrefix(before, "http://") || !strings.Contains(before, "|svcm_"+in.ID+"_") {
		t.Fatalf("model env from serve: %q", before)
	}
	waitStatus(t, env, in.ID, "sleeping", 30*time.Second)
	install, err := env.Server.Store.Meta(ctx, "install_id")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("docker", "rm", "-f", "svc-"+install+"-"+in.ID).CombinedOutput(); err != nil {
		t.Fatalf("docker rm: %v %s", err, out)
	}
	if code, b, _ := fetch(t, hc, "GET", viaAlone+"/", key, nil); code != 200 || b != "hello from port 8000\n" {
		t.Fatalf("wake with a new container through svcd edge: %d %q", code, b)
	}
	if after := modelEnv(); after != before {
		t.Fatalf("model env of the recreated container %q, want %q", after, before)
	}
}
