package e2e

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/runtime/docker"
	"github.com/svc-dev/svc/internal/store"
	"github.com/svc-dev/svc/internal/svctest"
	"github.com/svc-dev/svc/internal/testimage"
	"github.com/svc-dev/svc/sdk"
)

// TestKillDuringSleepAndWakeThenRecover: svcd killed while a checkpoint
// is written finishes the sleep at its next start; killed in the middle
// of a wake, it finishes the wake. Either way the instance serves again.
func TestKillDuringSleepAndWakeThenRecover(t *testing.T) {
	testimage.RequireDocker(t)
	ctx := context.Background()
	source := testimage.StartRegistry(t)
	img := testimage.Push(t, source, "test/web", svctest.WebApp(8000))
	p := &proc{t: t, bin: buildSvcd(t), data: t.TempDir(), listen: freePort(t),
		args: []string{"--min-idle-timeout", "1", "--idle-check-every", "200ms"}}
	p.start("")
	port := 8000
	if _, err := p.client.CreateTemplate(ctx, sdk.CreateTemplate{Name: "web", ImageRef: img.Ref, DefaultPort: &port}); err != nil {
		t.Fatal(err)
	}
	in, err := p.client.CreateInstance(ctx, sdk.CreateInstance{Template: "web", AutoSleep: ptr(true), IdleTimeoutSeconds: ptr(1)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		p.client.DeleteInstance(ctx, in.ID)
		p.stop()
	}()
	p.stop()

	// Killed as the checkpoint starts: the row says sleeping, op sleep.
	p.start("sleep.checkpoint")
	p.died()
	p.start("")
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := p.client.Instance(ctx, in.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status == "sleeping" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after recovery: %s", got.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	st, err := store.Open(ctx, filepath.Join(p.data, "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	row, _ := st.Instance(ctx, in.ID)
	install, _ := st.Meta(ctx, "install_id")
	st.Close()
	drv, err := docker.New(ctx, docker.Config{DataDir: p.data, Install: install, Network: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	if cs, _ := drv.Inspect(ctx, in.ID); row.Op != "" || cs.Addr.IsValid() {
		t.Fatalf("recovered sleep: op %q, container %+v", row.Op, cs)
	}
	url := in.URL
	hc := plainClient()
	key := map[string]string{"X-Svc-Key": p.client.Key}
	p.stop()

	// Killed in the middle of the wake a request started.
	p.start("boot.created")
	p.crashDuring(func() error {
		req, _ := http.NewRequest("GET", url+"/", nil)
		req.Header.Set("X-Svc-Key", p.client.Key)
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	})
	p.start("")
	code, b, _ := fetch(t, hc, "GET", url+"/", key, nil)
	if code != 200 || b != "hello from port 8000\n" {
		t.Fatalf("after the recovered wake: %d %q", code, b)
	}
}
