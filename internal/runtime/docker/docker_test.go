package docker_test

import (
	"context"
	"crypto/rand"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/runtime"
	"github.com/svc-dev/svc/internal/runtime/docker"
	"github.com/svc-dev/svc/internal/runtime/runtimetest"
	"github.com/svc-dev/svc/internal/testimage"
)

// The suite image is pushed once per test process to a registry that lives
// as long as the process; TestMain removes it from the engine at the end.
var (
	imageOnce sync.Once
	imageRef  string
	imageErr  error
	stopReg   func()
)

func suiteImage(t *testing.T) string {
	t.Helper()
	imageOnce.Do(func() {
		var reg string
		reg, stopReg = testimage.ServeRegistry()
		var img testimage.Image
		img, imageErr = testimage.PushImage(reg, "docker-driver/suite", runtimetest.ImageOptions())
		imageRef = img.Ref
	})
	if imageErr != nil {
		t.Fatalf("suite image: %v", imageErr)
	}
	return imageRef
}

func TestMain(m *testing.M) {
	code := m.Run()
	if imageRef != "" {
		if c, err := client.New(client.FromEnv); err == nil {
			c.ImageRemove(context.Background(), imageRef, client.ImageRemoveOptions{Force: true})
			c.Close()
		}
	}
	if stopReg != nil {
		stopReg()
	}
	os.Exit(code)
}

// needHost skips (or, where a daemon must be present, fails) without dockerd
// or root: loop devices and mounts need root, as svcd does in production.
func needHost(t *testing.T) {
	t.Helper()
	testimage.RequireDocker(t)
	if os.Geteuid() != 0 {
		if os.Getenv(testimage.EnvRequireDocker) == "1" {
			t.Fatal("the docker driver tests need root")
		}
		t.Skip("the docker driver needs root")
	}
}

// newDriver returns a driver of its own install and data directory, as a
// separate svcd sharing the daemon would have.
func newDriver(t *testing.T) *docker.Driver {
	t.Helper()
	return newDriverAt(t, t.TempDir(), "test-"+strings.ToLower(rand.Text()[:8]))
}

func newDriverAt(t *testing.T, dataDir, install string) *docker.Driver {
	t.Helper()
	needHost(t)
	d, err := docker.New(t.Context(), docker.Config{DataDir: dataDir, Install: install})
	if err != nil {
		t.Fatalf("new driver: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestConformance(t *testing.T) {
	needHost(t)
	runtimetest.Run(t, func(t *testing.T) runtime.Driver { return newDriver(t) }, suiteImage(t))
}
