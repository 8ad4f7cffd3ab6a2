package runtimetest

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/runtime"
)

// testLifecycle drives create, start, stop, start, remove, each twice.
func testLifecycle(t *testing.T, s *suite) {
	spec := s.spec()
	in := s.create(t, spec)
	if err := in.d.Create(ctx(t), spec); err != nil {
		t.Fatalf("second create: %v", err)
	}
	if st := in.inspect(t); st.State != runtime.Created {
		t.Fatalf("after create: %+v, want created", st)
	}
	for i := range 2 {
		if err := in.d.Start(ctx(t), in.id); err != nil {
			t.Fatalf("start #%d: %v", i+1, err)
		}
	}
	st := in.waitState(t, func(st runtime.Status) bool { return st.State == runtime.Running })
	if !st.Addr.IsValid() {
		t.Errorf("running without an address: %+v", st)
	}
	if st.StartedAt.IsZero() {
		t.Errorf("running without StartedAt: %+v", st)
	}
	for i := range 2 {
		if err := in.d.Stop(ctx(t), in.id, 10*time.Second); err != nil {
			t.Fatalf("stop #%d: %v", i+1, err)
		}
	}
	st = in.inspect(t)
	if st.State != runtime.Exited || st.Addr.IsValid() || st.FinishedAt.IsZero() {
		t.Fatalf("after stop: %+v, want exited with FinishedAt and no address", st)
	}
	// A second create of a stopped instance leaves it as it is.
	if err := in.d.Create(ctx(t), spec); err != nil {
		t.Fatalf("create of a stopped instance: %v", err)
	}
	if st := in.inspect(t); st.State != runtime.Exited {
		t.Fatalf("create changed a stopped instance: %+v", st)
	}
	in.start(t)
	for i := range 2 {
		if err := in.d.Remove(ctx(t), in.id); err != nil {
			t.Fatalf("remove #%d: %v", i+1, err)
		}
	}
	checkGone(t, in.d, in.id)
	// Stop and Inspect of a removed instance are not errors.
	if err := in.d.Stop(ctx(t), in.id, time.Second); err != nil {
		t.Errorf("stop after remove: %v", err)
	}
}

// testStartMissing: Start of an unknown id says ErrNoContainer, so the
// instance service knows to Create.
func testStartMissing(t *testing.T, s *suite) {
	d := s.newDriver(t)
	id := newID()
	err := d.Start(ctx(t), id)
	if !errors.Is(err, runtime.ErrNoContainer) {
		t.Fatalf("start of a missing instance: %v, want ErrNoContainer", err)
	}
	if st, err := d.Inspect(ctx(t), id); err != nil || st.State != runtime.Missing {
		t.Fatalf("inspect of a missing instance: %+v %v", st, err)
	}
	if err := d.Remove(ctx(t), id); err != nil {
		t.Fatalf("remove of a missing instance: %v", err)
	}
}

// testStopKills: a main process that ignores SIGTERM is killed after the
// grace period.
func testStopKills(t *testing.T, s *suite) {
	spec := s.spec()
	spec.Env["IGNORE_TERM"] = "1"
	in := s.running(t, spec)
	waitLog(t, in, "tick 2")
	if err := in.d.Stop(ctx(t), in.id, time.Second); err != nil {
		t.Fatalf("stop: %v", err)
	}
	st := in.inspect(t)
	if st.State != runtime.Exited {
		t.Fatalf("after stop: %+v", st)
	}
	if logs := readLogs(t, in, runtime.LogOptions{}); strings.Contains(logs, "stopping") {
		t.Errorf("the process saw a TERM it should have ignored:\n%s", logs)
	}
}

// testRemoveRunning removes a running instance in one call.
func testRemoveRunning(t *testing.T, s *suite) {
	in := s.running(t, s.spec())
	in.sh(t, "echo data > /home/file")
	if err := in.d.Remove(ctx(t), in.id); err != nil {
		t.Fatalf("remove: %v", err)
	}
	checkGone(t, in.d, in.id)
}

// testMainExits: a main process that exits is reported with its exit code
// (while the engine restarts it, or once stopped).
func testMainExits(t *testing.T, s *suite) {
	spec := s.spec()
	spec.Env["EXIT_WITH"] = "3"
	in := s.create(t, spec)
	if err := in.d.Start(ctx(t), in.id); err != nil {
		t.Fatalf("start: %v", err)
	}
	in.waitState(t, func(st runtime.Status) bool {
		return (st.State == runtime.Exited || st.State == runtime.Restarting) && st.ExitCode == 3
	})
	in.stop(t)
	st := in.inspect(t)
	if st.State != runtime.Exited || st.ExitCode != 3 {
		t.Fatalf("after stop: %+v, want exited with code 3", st)
	}
	if logs := readLogs(t, in, runtime.LogOptions{}); !strings.Contains(logs, "exiting with 3") {
		t.Errorf("console lacks the exit line:\n%s", logs)
	}
}

// testList: List has created instances, stopped ones too, and not removed
// ones.
func testList(t *testing.T, s *suite) {
	a := s.create(t, s.spec())
	spec := s.spec()
	if err := a.d.Create(ctx(t), spec); err != nil {
		t.Fatalf("create b: %v", err)
	}
	list := func() []string {
		ids, err := a.d.List(ctx(t))
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		return ids
	}
	ids := list()
	if !slices.Contains(ids, a.id) || !slices.Contains(ids, spec.InstanceID) {
		t.Fatalf("list %v lacks %s or %s", ids, a.id, spec.InstanceID)
	}
	if err := a.d.Remove(ctx(t), spec.InstanceID); err != nil {
		t.Fatalf("remove b: %v", err)
	}
	ids = list()
	if !slices.Contains(ids, a.id) || slices.Contains(ids, spec.InstanceID) {
		t.Fatalf("after removing %s, list is %v", spec.InstanceID, ids)
	}
}
