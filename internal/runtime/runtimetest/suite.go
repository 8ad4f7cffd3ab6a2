// Package runtimetest is the conformance suite every runtime.Driver passes:
// lifecycle round trips and idempotency, env, limits, the disk quota and
// its persistence, seeded home content, exec, logs, metrics, List and the
// removal of everything. Drivers run it from their own tests:
//
//	runtimetest.Run(t, func(t *testing.T) runtime.Driver { return newDriver(t) })
package runtimetest

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/runtime"
	"github.com/svc-dev/svc/internal/testimage"
)

// Residue is implemented by drivers that leave host state per instance
// (mounts, loop devices, files); after Remove the suite wants it empty.
type Residue interface {
	Residue(ctx context.Context, id string) ([]string, error)
}

// Sizes the suite creates instances with: small, so many fit on a test host.
const (
	MemoryBytes = 128 << 20
	DiskBytes   = 64 << 20
)

// wait bounds every poll for a condition; reaching it fails the test.
const wait = 60 * time.Second

// Run runs the suite. newDriver is called once per subtest. image is the
// reference of an image built from ImageOptions; without it the suite
// pushes one to a registry of its own on loopback.
func Run(t *testing.T, newDriver func(t *testing.T) runtime.Driver, image ...string) {
	var ref string
	if len(image) > 0 && image[0] != "" {
		ref = image[0]
	} else {
		ref = testimage.Push(t, testimage.StartRegistry(t), "runtimetest/suite", ImageOptions()).Ref
	}
	s := &suite{image: ref, newDriver: newDriver}
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s *suite)
	}{
		{"Lifecycle", testLifecycle},
		{"StartMissing", testStartMissing},
		{"StopKillsAfterGrace", testStopKills},
		{"RemoveRunning", testRemoveRunning},
		{"MainProcessExits", testMainExits},
		{"List", testList},
		{"Env", testEnv},
		{"Limits", testLimits},
		{"DiskQuotaAndPersistence", testDisk},
		{"SeededHome", testSeed},
		{"ExecResult", testExecResult},
		{"ExecOutputCap", testExecCap},
		{"ExecTimeout", testExecTimeout},
		{"ExecBackgroundChild", testExecBackground},
		{"ExecNotRunning", testExecNotRunning},
		{"LogsTail", testLogsTail},
		{"LogsFollow", testLogsFollow},
		{"Metrics", testMetrics},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, s)
		})
	}
}

type suite struct {
	image     string
	newDriver func(t *testing.T) runtime.Driver
}

// instance is one test instance on its own driver.
type instance struct {
	d    runtime.Driver
	id   string
	spec runtime.Spec
}

// spec returns a fresh instance's spec; callers adjust it before create.
func (s *suite) spec() runtime.Spec {
	return runtime.Spec{
		InstanceID:  newID(),
		Image:       s.image,
		Env:         map[string]string{"SVC_TEST_MARK": "conformance"},
		CPUs:        1,
		MemoryBytes: MemoryBytes,
		DiskBytes:   DiskBytes,
	}
}

// create makes (without starting) an instance and removes it at the end.
func (s *suite) create(t *testing.T, spec runtime.Spec) *instance {
	t.Helper()
	d := s.newDriver(t)
	in := &instance{d: d, id: spec.InstanceID, spec: spec}
	t.Cleanup(func() {
		if err := d.Remove(context.Background(), in.id); err != nil {
			t.Errorf("cleanup: remove %s: %v", in.id, err)
		}
	})
	if err := d.Create(ctx(t), spec); err != nil {
		t.Fatalf("create: %v", err)
	}
	return in
}

// running makes and starts an instance and waits until it runs.
func (s *suite) running(t *testing.T, spec runtime.Spec) *instance {
	t.Helper()
	in := s.create(t, spec)
	in.start(t)
	return in
}

func (in *instance) start(t *testing.T) {
	t.Helper()
	if err := in.d.Start(ctx(t), in.id); err != nil {
		t.Fatalf("start: %v", err)
	}
	in.waitState(t, func(st runtime.Status) bool { return st.State == runtime.Running })
}

func (in *instance) stop(t *testing.T) {
	t.Helper()
	if err := in.d.Stop(ctx(t), in.id, 10*time.Second); err != nil {
		t.Fatalf("stop: %v", err)
	}
}

func (in *instance) inspect(t *testing.T) runtime.Status {
	t.Helper()
	st, err := in.d.Inspect(ctx(t), in.id)
	if err != nil {
		t.Fatalf("inspect: %v", err)
	}
	return st
}

// waitState polls Inspect until ok holds and returns that status.
func (in *instance) waitState(t *testing.T, ok func(runtime.Status) bool) runtime.Status {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		st := in.inspect(t)
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("instance %s: condition not reached; last status %+v", in.id, st)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sh runs a shell command and fails the test unless it exits 0.
func (in *instance) sh(t *testing.T, script string) string {
	t.Helper()
	res := in.exec(t, runtime.ExecSpec{Cmd: []string{"/bin/sh", "-c", script}})
	if res.ExitCode != 0 {
		t.Fatalf("exec %q: exit %d\nstdout: %s\nstderr: %s", script, res.ExitCode, res.Stdout, res.Stderr)
	}
	return string(res.Stdout)
}

func (in *instance) exec(t *testing.T, spec runtime.ExecSpec) runtime.ExecResult {
	t.Helper()
	if spec.Timeout == 0 {
		spec.Timeout = wait
	}
	if spec.MaxOutput == 0 {
		spec.MaxOutput = 4 << 20
	}
	res, err := in.d.Exec(ctx(t), in.id, spec)
	if err != nil {
		t.Fatalf("exec %q: %v", spec.Cmd, err)
	}
	return res
}

// checkGone fails unless id is missing everywhere the driver can tell.
func checkGone(t *testing.T, d runtime.Driver, id string) {
	t.Helper()
	if st, err := d.Inspect(ctx(t), id); err != nil || st.State != runtime.Missing {
		t.Errorf("after remove: inspect %+v, %v; want missing", st, err)
	}
	ids, err := d.List(ctx(t))
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	for _, got := range ids {
		if got == id {
			t.Errorf("after remove: list still has %s", id)
		}
	}
	if r, ok := d.(Residue); ok {
		left, err := r.Residue(ctx(t), id)
		if err != nil {
			t.Fatalf("residue: %v", err)
		}
		if len(left) > 0 {
			t.Errorf("after remove, left on the host: %s", strings.Join(left, "; "))
		}
	}
}

// ctx is the test's context; go test's -timeout bounds a hung driver.
func ctx(t *testing.T) context.Context { return t.Context() }

// newID makes an id like the platform's: 10 lowercase letters and digits.
func newID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 10)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
