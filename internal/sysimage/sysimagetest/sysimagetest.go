// Package sysimagetest builds and publishes system template images for
// tests, with a svc-gateway compiled from this checkout. The first call on
// a machine makes the Debian root and builds (a few minutes for
// svc-general-small); the engine's cache makes later calls take seconds.
package sysimagetest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/registry"
	"github.com/svc-dev/svc/internal/store"
	"github.com/svc-dev/svc/internal/sysimage"
	"github.com/svc-dev/svc/internal/testimage"
)

// Timeout bounds one Publish, the first build on a fresh machine included.
const Timeout = 30 * time.Minute

// Publish builds the named system templates and publishes them into st and
// reg, as `make images` does into a data directory, and returns their
// releases in the order asked. With a test's svcd (svctest.New) pass
// env.Server.Store and env.Server.Registry; creates of those templates then
// run the images.
func Publish(t testing.TB, st *store.Store, reg *registry.Registry, names ...string) []store.Release {
	t.Helper()
	b := Builder(t)
	p := &sysimage.Publisher{Docker: b.Docker, Store: st, Registry: reg, Logf: t.Logf}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	pubs, err := sysimage.Release(ctx, b, p, names...)
	if err != nil {
		t.Fatalf("sysimagetest: %v", err)
	}
	out := make([]store.Release, len(pubs))
	for i, p := range pubs {
		out[i] = p.Release
	}
	return out
}

// Builder returns a builder on the local engine with a svc-gateway built
// for the test, logging its progress to the test log.
func Builder(t testing.TB) *sysimage.Builder {
	t.Helper()
	testimage.RequireDocker(t)
	c, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &sysimage.Builder{Docker: c, Gateway: Gateway(t), Progress: logWriter{t}}
}

// Gateway compiles svc-gateway as make build does (static, no cgo) into
// the test's temporary directory and returns its path.
func Gateway(t testing.TB) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "svc-gateway")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, "github.com/svc-dev/svc/cmd/svc-gateway")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sysimagetest: build svc-gateway: %v\n%s", err, msg)
	}
	return out
}

type logWriter struct{ t testing.TB }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
