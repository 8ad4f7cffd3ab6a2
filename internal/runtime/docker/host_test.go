package docker_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/runtime"
	"github.com/svc-dev/svc/internal/runtime/docker"
	"github.com/svc-dev/svc/internal/runtime/docker/disk"
)

func spec(t *testing.T, id string) runtime.Spec {
	return runtime.Spec{
		InstanceID: id, Image: suiteImage(t), CPUs: 1,
		MemoryBytes: 128 << 20, DiskBytes: 64 << 20,
	}
}

// up creates and starts id, and removes it when the test ends.
func up(t *testing.T, d *docker.Driver, s runtime.Spec) {
	t.Helper()
	t.Cleanup(func() {
		if err := d.Remove(context.Background(), s.InstanceID); err != nil {
			t.Errorf("remove %s: %v", s.InstanceID, err)
		}
	})
	if err := d.Create(t.Context(), s); err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := d.Start(t.Context(), s.InstanceID); err != nil {
		t.Fatalf("start: %v", err)
	}
}

func sh(t *testing.T, d *docker.Driver, id, script string) string {
	t.Helper()
	res, err := d.Exec(t.Context(), id, runtime.ExecSpec{Cmd: []string{"/bin/sh", "-c", script}, Timeout: time.Minute, MaxOutput: 1 << 20})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec %q: %v exit %d stderr %s", script, err, res.ExitCode, res.Stderr)
	}
	return string(res.Stdout)
}

func dockerClient(t *testing.T) *client.Client {
	c, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestCPUsClampedToHost: a shape with more vCPUs than the host runs, with
// every host core as its limit.
func TestCPUsClampedToHost(t *testing.T) {
	d := newDriver(t)
	s := spec(t, "clamp")
	s.CPUs = 64
	up(t, d, s)
	f := strings.Fields(sh(t, d, s.InstanceID, `cat /sys/fs/cgroup/cpu.max 2>/dev/null ||
		echo $(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)`))
	quota, _ := strconv.Atoi(f[0])
	period, _ := strconv.Atoi(f[1])
	if period == 0 || quota/period != goruntime.NumCPU() {
		t.Errorf("cpu quota %v, want %d CPUs", f, goruntime.NumCPU())
	}
}

// TestContainerShape checks what the engine was told: name, labels, init,
// restart policy, log cap, no swap, the network.
func TestContainerShape(t *testing.T) {
	d := newDriver(t)
	s := spec(t, "shape")
	up(t, d, s)
	res, err := dockerClient(t).ContainerInspect(t.Context(), "svc-"+d.Install()+"-shape", client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Container
	h := c.HostConfig
	if c.Config.Labels[docker.LabelInstance] != "shape" || c.Config.Labels[docker.LabelInstall] != d.Install() {
		t.Errorf("labels %v", c.Config.Labels)
	}
	if h.RestartPolicy.Name != "unless-stopped" || h.LogConfig.Type != "json-file" || h.LogConfig.Config["max-size"] == "" {
		t.Errorf("restart %v, log %v", h.RestartPolicy, h.LogConfig)
	}
	if h.Memory != s.MemoryBytes || h.MemorySwap != s.MemoryBytes {
		t.Errorf("memory %d swap %d", h.Memory, h.MemorySwap)
	}
	if _, ok := c.NetworkSettings.Networks[docker.DefaultNetwork]; !ok || len(c.NetworkSettings.Networks) != 1 {
		t.Errorf("networks %v", c.NetworkSettings.Networks)
	}
	v, err := dockerClient(t).ServerVersion(t.Context(), client.ServerVersionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, comp := range v.Components {
		if comp.Name == "docker-init" {
			if got := strings.TrimSpace(sh(t, d, s.InstanceID, "cat /proc/1/comm")); got != "docker-init" {
				t.Errorf("pid 1 is %q, want docker-init", got)
			}
		}
	}
}

// TestAfterReboot: a host reboot leaves the disk unmounted. The engine's
// own restart of the container must fail rather than write to the host,
// and Start (and Create) mount the disk again with the data on it.
func TestAfterReboot(t *testing.T) {
	dir := t.TempDir()
	d := newDriverAt(t, dir, "test-reboot")
	s := spec(t, "reboot")
	up(t, d, s)
	sh(t, d, s.InstanceID, "echo survived > /home/file")
	if err := d.Stop(t.Context(), s.InstanceID, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	img, mnt := filepath.Join(dir, "disks", "reboot.img"), filepath.Join(dir, "mnt", "reboot")
	if err := disk.Unmount(img, mnt); err != nil {
		t.Fatal(err)
	}
	_, err := dockerClient(t).ContainerStart(t.Context(), "svc-test-reboot-reboot", client.ContainerStartOptions{})
	if err == nil {
		t.Fatal("the engine started the container with no disk mounted")
	}
	if entries, _ := os.ReadDir(mnt); len(entries) > 0 {
		t.Fatalf("the engine wrote into the bare mount point: %v", entries)
	}
	if err := d.Create(t.Context(), s); err != nil {
		t.Fatalf("create of an existing instance: %v", err)
	}
	if ok, _ := disk.Mounted(mnt); !ok {
		t.Fatal("create left the disk unmounted")
	}
	if err := disk.Unmount(img, mnt); err != nil {
		t.Fatal(err)
	}
	if err := d.Start(t.Context(), s.InstanceID); err != nil {
		t.Fatalf("start after reboot: %v", err)
	}
	if got := sh(t, d, s.InstanceID, "cat /home/file"); got != "survived\n" {
		t.Errorf("after reboot: %q", got)
	}
}

// TestSeedOnce: a recreated container (restart, update) finds the disk as
// the user left it; the image's home content is not copied again.
func TestSeedOnce(t *testing.T) {
	d := newDriverAt(t, t.TempDir(), "test-seedonce")
	s := spec(t, "seedonce")
	up(t, d, s)
	sh(t, d, s.InstanceID, "echo changed > /home/svc/seed.txt && rm /root/.seedrc")
	if _, err := dockerClient(t).ContainerRemove(t.Context(), "svc-test-seedonce-seedonce", client.ContainerRemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if err := d.Create(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	if err := d.Start(t.Context(), s.InstanceID); err != nil {
		t.Fatal(err)
	}
	if got := sh(t, d, s.InstanceID, "cat /home/svc/seed.txt; ls -A /root"); got != "changed\n" {
		t.Errorf("after recreate: %q, want the user's changes", got)
	}
}

// TestExecCancel: a caller that gives up kills the command.
func TestExecCancel(t *testing.T) {
	d := newDriver(t)
	s := spec(t, "cancel")
	up(t, d, s)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := d.Exec(ctx, s.InstanceID, runtime.ExecSpec{Cmd: []string{"sleep", "615"}})
		done <- err
	}()
	for !strings.Contains(sh(t, d, s.InstanceID, "ps -o args"), "sleep 615") {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("exec after cancel: %v", err)
	}
	for i := 0; strings.Contains(sh(t, d, s.InstanceID, "ps -o args"), "sleep 615"); i++ {
		if i == 100 {
			t.Fatal("the cancelled command still runs")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMissingContainer: verbs that need a container say so recognisably.
func TestMissingContainer(t *testing.T) {
	d := newDriver(t)
	if _, err := d.Logs(t.Context(), "nothere", runtime.LogOptions{}); !errors.Is(err, runtime.ErrNoContainer) {
		t.Errorf("logs: %v", err)
	}
	if _, err := d.Metrics(t.Context(), "nothere"); !errors.Is(err, runtime.ErrNoContainer) {
		t.Errorf("metrics: %v", err)
	}
	if err := d.Create(t.Context(), runtime.Spec{InstanceID: "../etc", Image: "x"}); err == nil {
		t.Error("create accepted an id that is a path")
	}
}
