package docker_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/svc-dev/svc/internal/runtime/docker"
	"github.com/svc-dev/svc/internal/testimage"
)

// The driver's verdict on checkpoints matches what the engine and criu
// say on this host: experimental mode on and a passing criu check.
func TestCheckpointSupportMatchesHost(t *testing.T) {
	testimage.RequireDocker(t)
	d, err := docker.New(context.Background(), docker.Config{DataDir: t.TempDir(), Install: "cptest", Network: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	out, err := exec.Command("docker", "info", "--format", "{{.ExperimentalBuild}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	experimental := strings.TrimSpace(string(out)) == "true"
	criuOK := exec.Command("criu", "check").Run() == nil
	got := d.CheckpointSupport()
	if (got == nil) != (experimental && criuOK) {
		t.Fatalf("CheckpointSupport() = %v; engine experimental %v, criu check passes %v", got, experimental, criuOK)
	}
	t.Logf("checkpoint support on this host: %v", got)
	if got != nil {
		// Unsupported: Discard is a no-op and Checkpoint says why.
		if err := d.Discard(context.Background(), "abcde12345"); err != nil {
			t.Fatal(err)
		}
		if err := d.Checkpoint(context.Background(), "abcde12345"); err == nil || err.Error() != got.Error() {
			t.Fatalf("Checkpoint on an unsupported host: %v", err)
		}
	}
}
