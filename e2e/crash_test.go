package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/runtime"
	"github.com/svc-dev/svc/internal/runtime/docker"
	"github.com/svc-dev/svc/internal/store"
	"github.com/svc-dev/svc/internal/svctest"
	"github.com/svc-dev/svc/internal/testimage"
	"github.com/svc-dev/svc/sdk"
)

// proc is svcd running as its own process, so it can be killed -9.
type proc struct {
	t      *testing.T
	bin    string
	data   string
	listen string
	args   []string // extra flags of serve
	cmd    *exec.Cmd
	client *sdk.Client
}

func buildSvcd(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "svcd")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/svc-dev/svc/cmd/svcd").CombinedOutput()
	if err != nil {
		t.Fatalf("build svcd: %v\n%s", err, out)
	}
	return bin
}

// start runs svcd with the given failpoints and waits until it serves.
func (p *proc) start(failpoints string) {
	p.t.Helper()
	p.cmd = exec.Command(p.bin, append([]string{"serve", "--data", p.data, "--listen", p.listen, "--registry-listen", "127.0.0.1:0", "--log-level", "debug"}, p.args...)...)
	p.cmd.Env = append(os.Environ(), "SVC_FAILPOINTS="+failpoints)
	logf, _ := os.OpenFile(filepath.Join(p.data, "svcd.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if key, err := os.ReadFile(filepath.Join(p.data, "api-key")); err == nil {
			p.client = sdk.New("http://"+p.listen, strings.TrimSpace(string(key)))
			if _, err := p.client.Templates(context.Background()); err == nil {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.t.Fatalf("svcd did not come up; log:\n%s", p.log())
}

func (p *proc) log() string {
	b, _ := os.ReadFile(filepath.Join(p.data, "svcd.log"))
	return string(b)
}

// crashDuring runs call, which must hit the armed failpoint: the process
// dies with SIGKILL and the call fails.
func (p *proc) crashDuring(call func() error) {
	p.t.Helper()
	if err := call(); err == nil {
		p.t.Fatalf("call succeeded although svcd should have died")
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if !strings.Contains(fmt.Sprint(err), "killed") {
			p.t.Fatalf("svcd exited with %v, want killed; log:\n%s", err, p.log())
		}
	case <-time.After(30 * time.Second):
		p.t.Fatal("svcd did not die at the failpoint")
	}
}

// died waits for svcd to die at its armed failpoint on its own (the idle
// watcher hits it, not a call).
func (p *proc) died() {
	p.t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if !strings.Contains(fmt.Sprint(err), "killed") {
			p.t.Fatalf("svcd exited with %v, want killed; log:\n%s", err, p.log())
		}
	case <-time.After(60 * time.Second):
		p.t.Fatalf("svcd did not die at the failpoint; log:\n%s", p.log())
	}
}

func (p *proc) stop() {
	p.cmd.Process.Kill()
	p.cmd.Wait()
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func TestKillDuringOperationsThenRecover(t *testing.T) {
	testimage.RequireDocker(t)
	ctx := context.Background()
	source := testimage.StartRegistry(t)
	img := testimage.Push(t, source, "test/sleeper", svctest.Sleeper())
	p := &proc{t: t, bin: buildSvcd(t), data: t.TempDir(), listen: freePort(t)}

	p.start("")
	if _, err := p.client.CreateTemplate(ctx, sdk.CreateTemplate{Name: "sleeper", ImageRef: img.Ref}); err != nil {
		t.Fatal(err)
	}
	mk := func(name string) sdk.Instance {
		in, err := p.client.CreateInstance(ctx, sdk.CreateInstance{Template: "sleeper", Name: ptr(name)})
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	toStop, toRestart, toDelete, toLose := mk("stop"), mk("restart"), mk("delete"), mk("lose")
	p.stop()

	create := func(name string) func() error {
		return func() error {
			_, err := p.client.CreateInstance(ctx, sdk.CreateInstance{Template: "sleeper", Name: ptr(name)})
			return err
		}
	}
	// Each run arms one failpoint; the next start recovers what it broke.
	p.start("boot.created")
	p.crashDuring(create("created-then-killed"))
	p.start("stop.stopped")
	p.crashDuring(func() error { _, err := p.client.StopInstance(ctx, toStop.ID); return err })
	p.start("restart.stopped")
	p.crashDuring(func() error { _, err := p.client.RestartInstance(ctx, toRestart.ID); return err })
	p.start("delete.removed")
	p.crashDuring(func() error { return p.client.DeleteInstance(ctx, toDelete.ID) })
	p.start("create.recorded")
	p.crashDuring(create("recorded-then-killed"))

	// Behind svcd's back: a container vanishes, and an orphan appears.
	st, err := store.Open(ctx, filepath.Join(p.data, "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	install, _ := st.Meta(ctx, "install_id")
	st.Close()
	drv, err := docker.New(ctx, docker.Config{DataDir: p.data, Install: install, Network: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("docker", "rm", "-f", containerOf(t, drv, toLose.ID)).Run(); err != nil {
		t.Fatal(err)
	}
	orphan := runtime.Spec{InstanceID: "orphan0000", Image: img.Ref, CPUs: 1, MemoryBytes: 64 << 20, DiskBytes: 64 << 20}
	if err := drv.Create(ctx, orphan); err != nil {
		t.Fatal(err)
	}

	p.start("")
	defer func() {
		list, _ := p.client.Instances(ctx)
		for _, in := range list {
			p.client.DeleteInstance(ctx, in.ID)
		}
		p.stop()
	}()
	byName := map[string]sdk.Instance{}
	list, err := p.client.Instances(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range list {
		byName[*in.Name] = in
	}
	want := map[string]string{"created-then-killed": "running", "recorded-then-killed": "running", "stop": "stopped",
		"restart": "running", "lose": "stopped"}
	for name, status := range want {
		in, ok := byName[name]
		if !ok || in.Status != status {
			t.Errorf("%s: want %s, got %+v", name, status, in)
		}
	}
	if _, ok := byName["delete"]; ok || len(list) != len(want) {
		t.Errorf("instances after recovery: %d, delete present: %v", len(list), ok)
	}
	if r := byName["lose"].StatusReason; r == nil || r.Code != "container_lost" {
		t.Errorf("lost container reason: %+v", r)
	}
	// The runtime holds exactly the live instances: no orphan, nothing of
	// the deleted one.
	ids, err := drv.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, id := range ids {
		have[id] = true
	}
	for _, in := range list {
		if in.Status == "running" && !have[in.ID] {
			t.Errorf("running %s has no container", in.ID)
		}
		delete(have, in.ID)
	}
	if len(have) != 0 {
		t.Errorf("runtime keeps orphans: %v", have)
	}
	if _, err := os.Stat(filepath.Join(p.data, "disks", toDelete.ID+".img")); !os.IsNotExist(err) {
		t.Errorf("deleted instance's disk remains: %v", err)
	}
	for _, name := range []string{"created-then-killed", "recorded-then-killed", "restart"} {
		res, err := p.client.Exec(ctx, byName[name].ID, sdk.ExecRequest{Command: "echo alive"})
		if err != nil || res.Stdout != "alive\n" {
			t.Errorf("%s not usable: %v %+v", name, err, res)
		}
	}
	if t.Failed() {
		t.Logf("svcd log:\n%s", p.log())
	}
}

// containerOf finds the docker container id of an instance by its label.
func containerOf(t *testing.T, _ runtime.Driver, id string) string {
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label=svc.instance="+id).Output()
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	if !sc.Scan() {
		t.Fatalf("no container for %s", id)
	}
	return sc.Text()
}
