// Package testimage builds OCI images for tests without dockerd (a static
// busybox layer, extra files, Go programs compiled at test time), serves
// them from a real registry on loopback, and holds RequireDocker, the one
// rule for tests that need a Docker daemon.
package testimage

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"
)

// EnvRequireDocker names the variable that says a daemon must be present
// (set by make test and CI), so a missing one fails instead of skipping.
const EnvRequireDocker = "SVC_TEST_DOCKER"

var dockerPing = sync.OnceValue(func() error {
	c, err := client.New(client.FromEnv)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = c.Ping(ctx, client.PingOptions{})
	return err
})

// RequireDocker skips the test when no Docker daemon answers, or fails it
// when SVC_TEST_DOCKER=1 says one must be there.
func RequireDocker(t testing.TB) {
	t.Helper()
	err := dockerPing()
	if err == nil {
		return
	}
	if os.Getenv(EnvRequireDocker) == "1" {
		t.Fatalf("%s=1 but no Docker daemon answers: %v", EnvRequireDocker, err)
	}
	t.Skipf("no Docker daemon (set %s=1 to make this a failure): %v", EnvRequireDocker, err)
}
