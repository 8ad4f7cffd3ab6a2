package sysimage_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/gateway"
	"github.com/svc-dev/svc/internal/sysimage"
	"github.com/svc-dev/svc/internal/sysimage/sysimagetest"
	"github.com/svc-dev/svc/internal/template"
)

// svc-general-small builds, publishes a dated release whose registry image
// is the engine's, and runs: its gateway answers version and health on
// 3737 with the default harness, and a stop is graceful.
func TestSmallImage(t *testing.T) {
	b := sysimagetest.Builder(t)
	data := openData(t)
	p := &sysimage.Publisher{Docker: b.Docker, Store: data.Store, Registry: data.Registry, Logf: t.Logf}
	ctx := context.Background()
	pubs, err := sysimage.Release(ctx, b, p, "svc-general-small")
	if err != nil {
		t.Fatal(err)
	}
	rel := pubs[0].Release
	day := time.Now().UTC().Format("2006-01-02")
	if !pubs[0].New || rel.Tag != day || rel.ImageRef != "svc/svc-general-small:"+day || rel.Repo != "system/svc-general-small" {
		t.Fatalf("first publish: %+v new=%v, want a new release tagged %s", rel, pubs[0].New, day)
	}
	wantConfig(t, b.Docker, rel.ImageRef, "general-a", template.GatewayPort)
	engine, err := b.Docker.ImageInspect(ctx, rel.ImageRef)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := data.Registry.ConfigDigest(ctx, rel.Repo, rel.ImageDigest)
	if err != nil || cfg != engine.ID {
		t.Fatalf("registry image has config %s (%v), engine image is %s", cfg, err, engine.ID)
	}

	id, addr := run(t, b.Docker, rel.ImageRef, "SVC_GATEWAY_TOKEN=tok")
	base := fmt.Sprintf("http://%s:%d/v1", addr, template.GatewayPort)
	var version struct{ Name, Version string }
	getJSON(t, base+"/version", "tok", 20*time.Second, &version)
	if version.Name != "svc-gateway" || version.Version != gateway.Version {
		t.Errorf("version: %+v, want svc-gateway %s", version, gateway.Version)
	}
	var health struct {
		OK    bool   `json:"ok"`
		Agent string `json:"agent"`
	}
	getJSON(t, base+"/health", "tok", 5*time.Second, &health)
	if !health.OK || health.Agent != "general-a" {
		t.Errorf("health: %+v, want ok from general-a", health)
	}

	// svc-init stops the services on TERM and exits 0, well before the
	// engine's 10 s would kill it.
	start := time.Now()
	timeout := 10
	if _, err := b.Docker.ContainerStop(ctx, id, client.ContainerStopOptions{Timeout: &timeout}); err != nil {
		t.Fatal(err)
	}
	in, err := b.Docker.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); in.Container.State.ExitCode != 0 || took > 8*time.Second {
		t.Errorf("stop took %s with exit code %d, want a graceful exit 0", took, in.Container.State.ExitCode)
	}
}

// A rebuild with nothing changed publishes nothing; a changed image
// publishes the day's next tag, and the old tag still resolves to the old
// digest.
func TestRebuildPublishesOnlyChanges(t *testing.T) {
	b := sysimagetest.Builder(t)
	data := openData(t)
	p := &sysimage.Publisher{Docker: b.Docker, Store: data.Store, Registry: data.Registry, Logf: t.Logf}
	ctx := context.Background()
	const name = "svc-general-small"
	first, err := sysimage.Release(ctx, b, p, name)
	if err != nil {
		t.Fatal(err)
	}
	again, err := sysimage.Release(ctx, b, p, name)
	if err != nil {
		t.Fatal(err)
	}
	if again[0].New || again[0].Release != first[0].Release {
		t.Fatalf("unchanged rebuild published %+v (new=%v), want the first release %+v", again[0].Release, again[0].New, first[0].Release)
	}

	b.Labels = map[string]string{"svc.test.change": fmt.Sprint(time.Now().UnixNano())}
	changed, err := sysimage.Release(ctx, b, p, name)
	if err != nil {
		t.Fatal(err)
	}
	old, cur := first[0].Release, changed[0].Release
	if !changed[0].New || cur.Tag != old.Tag+".2" || cur.ImageDigest == old.ImageDigest {
		t.Fatalf("changed rebuild: %+v (new=%v), want a new digest tagged %s.2", cur, changed[0].New, old.Tag)
	}

	tpl := template.New(data.Store, nil)
	bare, err := tpl.Resolve(ctx, "", name)
	if err != nil || bare.Digest != cur.ImageDigest {
		t.Errorf("%s resolves to %s (%v), want the new %s", name, bare.Digest, err, cur.ImageDigest)
	}
	pinned, err := tpl.Resolve(ctx, "", name+"@"+old.Tag)
	if err != nil || pinned.Digest != old.ImageDigest || pinned.Template != name+"@"+old.Tag {
		t.Errorf("%s@%s resolves to %+v (%v), want the old %s", name, old.Tag, pinned, err, old.ImageDigest)
	}
	if !data.Registry.Exists(ctx, old.Repo, old.ImageDigest) {
		t.Errorf("the old release's image %s is gone from the registry", old.ImageDigest)
	}
}
