package docker_test

import (
	"crypto/rand"
	"fmt"
	"os"
	"testing"

	"github.com/svc-dev/svc/internal/runtime"
	"github.com/svc-dev/svc/internal/runtime/docker"
	"github.com/svc-dev/svc/internal/runtime/runtimetest"
	"github.com/svc-dev/svc/internal/testimage"
)

// newDriver returns a driver of its own install and data directory, as a
// separate svcd sharing the daemon would have.
func newDriver(t *testing.T) *docker.Driver {
	t.Helper()
	testimage.RequireDocker(t)
	if os.Geteuid() != 0 {
		// Loop devices and mounts need root, as svcd does in production.
		if os.Getenv(testimage.EnvRequireDocker) == "1" {
			t.Fatal("the docker driver tests need root")
		}
		t.Skip("the docker driver needs root")
	}
	d, err := docker.New(t.Context(), docker.Config{DataDir: t.TempDir(), Install: "test-" + rand.Text()[:8]})
	if err != nil {
		t.Fatalf("new driver: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestConformance(t *testing.T) {
	testimage.RequireDocker(t)
	runtimetest.Run(t, func(t *testing.T) runtime.Driver { return newDriver(t) })
}

var _ = fmt.Sprint
