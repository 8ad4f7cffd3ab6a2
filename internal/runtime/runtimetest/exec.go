package runtimetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/runtime"
)

func execSh(script string) runtime.ExecSpec {
	return runtime.ExecSpec{Cmd: []string{"/bin/sh", "-c", script}}
}

// testExecResult: exit code, separate streams, cwd and env.
func testExecResult(t *testing.T, s *suite) {
	in := s.running(t, s.spec())
	res := in.exec(t, execSh("echo out; echo err >&2; exit 7"))
	if res.ExitCode != 7 || string(res.Stdout) != "out\n" || string(res.Stderr) != "err\n" || res.Truncated || res.TimedOut {
		t.Errorf("result %+v", res)
	}
	spec := execSh(`pwd; printf '%s\n' "$FOO"; echo "$SVC_TEST_MARK"`)
	spec.Cwd = "/tmp"
	spec.Env = map[string]string{"FOO": "bar baz", "SVC_TEST_MARK": "overridden"}
	res = in.exec(t, spec)
	if got := string(res.Stdout); res.ExitCode != 0 || got != "/tmp\nbar baz\noverridden\n" {
		t.Errorf("cwd/env: exit %d stdout %q stderr %q", res.ExitCode, got, res.Stderr)
	}
	res = in.exec(t, runtime.ExecSpec{Cmd: []string{"/nonexistent"}})
	if res.ExitCode == 0 {
		t.Errorf("a missing binary exited 0: %+v", res)
	}
}

// testExecCap: MaxOutput caps stdout and stderr together, the command still
// runs to its end, and the result says it was truncated.
func testExecCap(t *testing.T, s *suite) {
	in := s.running(t, s.spec())
	script := "head -c 300000 /dev/zero; head -c 300000 /dev/zero >&2; echo done > /tmp/finished"
	spec := execSh(script)
	spec.MaxOutput = 100000
	res := in.exec(t, spec)
	if n := len(res.Stdout) + len(res.Stderr); n != 100000 || !res.Truncated || res.ExitCode != 0 {
		t.Errorf("capped: %d bytes out+err, truncated %v, exit %d", n, res.Truncated, res.ExitCode)
	}
	if got := in.sh(t, "cat /tmp/finished"); got != "done\n" {
		t.Errorf("the command did not run to its end: %q", got)
	}
	spec.MaxOutput = 1 << 20
	res = in.exec(t, spec)
	if len(res.Stdout) != 300000 || len(res.Stderr) != 300000 || res.Truncated {
		t.Errorf("under the cap: %d+%d bytes, truncated %v", len(res.Stdout), len(res.Stderr), res.Truncated)
	}
}

// testExecTimeout: at the timeout the command and its children are killed
// and the result says so.
func testExecTimeout(t *testing.T, s *suite) {
	in := s.running(t, s.spec())
	spec := execSh("echo started; sleep 613 & sleep 614")
	spec.Timeout = 500 * time.Millisecond
	res := in.exec(t, spec)
	if !res.TimedOut || res.ExitCode != -1 {
		t.Fatalf("result %+v, want TimedOut and exit -1", res)
	}
	if string(res.Stdout) != "started\n" {
		t.Errorf("output before the timeout: %q", res.Stdout)
	}
	// Both sleeps are gone (the kill may take a moment to land).
	deadline := time.Now().Add(wait)
	for {
		ps := in.sh(t, "ps -o args")
		if !strings.Contains(ps, "sleep 613") && !strings.Contains(ps, "sleep 614") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed-out command still running:\n%s", ps)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// testExecBackground: a command that leaves a child holding its output
// returns once it exits, with its own exit code, not at the timeout.
func testExecBackground(t *testing.T, s *suite) {
	in := s.running(t, s.spec())
	spec := execSh("echo before; sleep 616 & echo after; exit 3")
	spec.Timeout = 10 * time.Minute
	res := in.exec(t, spec)
	if res.ExitCode != 3 || res.TimedOut || string(res.Stdout) != "before\nafter\n" {
		t.Errorf("result %+v (stdout %q)", res, res.Stdout)
	}
	if ps := in.sh(t, "ps -o args"); !strings.Contains(ps, "sleep 616") {
		t.Errorf("the background child was killed:\n%s", ps)
	}
}

// testExecNotRunning: exec into a stopped instance wraps ErrNotRunning,
// into a missing one ErrNoContainer.
func testExecNotRunning(t *testing.T, s *suite) {
	in := s.create(t, s.spec())
	_, err := in.d.Exec(ctx(t), in.id, execSh("true"))
	if !errors.Is(err, runtime.ErrNotRunning) {
		t.Errorf("exec into a created instance: %v, want ErrNotRunning", err)
	}
	_, err = in.d.Exec(ctx(t), newID(), execSh("true"))
	if !errors.Is(err, runtime.ErrNoContainer) {
		t.Errorf("exec into a missing instance: %v, want ErrNoContainer", err)
	}
}
