package docker

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/runtime"
)

// After the command exits or is killed, its output is read for at most
// drainAfterExit more: a background child it left (`server &`, or one that
// escaped the kill by changing session) can hold the pipe open forever, and
// the engine ends the stream only when every writer has closed it.
const drainAfterExit = time.Second

// Exec runs spec.Cmd in the running container. The output is read to the
// end even past MaxOutput (the excess is discarded), so a chatty command
// never blocks on a full pipe. At the timeout, or when ctx ends, the
// command's process group and descendants are killed on the host through
// the pid the engine reports (the engine has no exec kill). Exec returns
// soon after the command exits even if a background child keeps its output
// open; what that child prints later is not collected.
func (d *Driver) Exec(ctx context.Context, id string, spec runtime.ExecSpec) (runtime.ExecResult, error) {
	if err := checkID(id); err != nil {
		return runtime.ExecResult{}, err
	}
	if len(spec.Cmd) == 0 {
		return runtime.ExecResult{}, errorf("exec %s: empty command", id)
	}
	env := make([]string, 0, len(spec.Env))
	for k, v := range spec.Env {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	created, err := d.c.ExecCreate(ctx, d.name(id), client.ExecCreateOptions{
		AttachStdout: true,
		AttachStderr: true,
		Env:          env,
		WorkingDir:   spec.Cwd,
		Cmd:          spec.Cmd,
	})
	if err != nil {
		// The engine answers a conflict for a stopped, paused or
		// restarting container.
		if cerrdefs.IsConflict(err) {
			return runtime.ExecResult{}, fmt.Errorf("docker: exec %s: %w", id, runtime.ErrNotRunning)
		}
		return runtime.ExecResult{}, missing(err, "exec", id)
	}
	att, err := d.c.ExecAttach(ctx, created.ID, client.ExecAttachOptions{})
	if err != nil {
		return runtime.ExecResult{}, errorf("exec %s: attach: %w", id, err)
	}
	defer att.Close()
	// Closing the output early (see drainAfterExit) ends the copy with an
	// error that is no failure.
	var cutOff atomic.Bool
	cutOutput := func() {
		cutOff.Store(true)
		att.Close()
	}

	var (
		killOnce sync.Once
		timedOut bool
		mu       sync.Mutex
	)
	kill := func(byTimeout bool) {
		mu.Lock()
		timedOut = timedOut || byTimeout
		mu.Unlock()
		killOnce.Do(func() {
			d.killExec(context.WithoutCancel(ctx), created.ID)
			time.AfterFunc(drainAfterExit, cutOutput)
		})
	}
	copied := make(chan struct{})
	defer close(copied)
	go d.closeAfterExit(context.WithoutCancel(ctx), created.ID, copied, cutOutput)
	if spec.Timeout > 0 {
		t := time.AfterFunc(spec.Timeout, func() { kill(true) })
		defer t.Stop()
	}
	stopCtx := context.AfterFunc(ctx, func() { kill(false) })
	defer stopCtx()

	out := &capped{limit: spec.MaxOutput}
	_, copyErr := stdcopy.StdCopy(out.stream(&out.stdout), out.stream(&out.stderr), att.Reader)

	code, err := d.execExit(context.WithoutCancel(ctx), created.ID)
	if err != nil {
		return runtime.ExecResult{}, errorf("exec %s: %w", id, err)
	}
	if ctx.Err() != nil {
		return runtime.ExecResult{}, fmt.Errorf("docker: exec %s: %w", id, ctx.Err())
	}
	mu.Lock()
	defer mu.Unlock()
	res := runtime.ExecResult{
		ExitCode:  code,
		Stdout:    out.stdout,
		Stderr:    out.stderr,
		Truncated: out.truncated,
		TimedOut:  timedOut,
	}
	if timedOut {
		res.ExitCode = -1
	} else if copyErr != nil && !cutOff.Load() {
		return runtime.ExecResult{}, errorf("exec %s: read output: %w", id, copyErr)
	}
	return res, nil
}

// closeAfterExit watches the command and, drainAfterExit after it exits,
// calls closeOutput unless the output has ended by then (copied closed).
func (d *Driver) closeAfterExit(ctx context.Context, execID string, copied <-chan struct{}, closeOutput func()) {
	for poll := 20 * time.Millisecond; ; poll = min(2*poll, 500*time.Millisecond) {
		select {
		case <-copied:
			return
		case <-time.After(poll):
		}
		res, err := d.c.ExecInspect(ctx, execID, client.ExecInspectOptions{})
		if err != nil || exited(res) {
			break
		}
	}
	select {
	case <-copied:
	case <-time.After(drainAfterExit):
		closeOutput()
	}
}

// exited tells a finished command from one not started yet: both read not
// running, but only a started one has a pid.
func exited(res client.ExecInspectResult) bool { return !res.Running && res.PID != 0 }

// execExit waits for the engine to record the exit: the output can end a
// moment before the engine has reaped the process.
func (d *Driver) execExit(ctx context.Context, execID string) (int, error) {
	for i := 0; ; i++ {
		res, err := d.c.ExecInspect(ctx, execID, client.ExecInspectOptions{})
		if err != nil {
			return 0, err
		}
		if !res.Running {
			return res.ExitCode, nil
		}
		if i == 400 { // 20 s: the process closed its output but lives on
			return 0, errors.New("command closed its output but did not exit")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// capped collects stdout and stderr up to one shared limit (0: none).
type capped struct {
	mu             sync.Mutex
	limit          int
	n              int
	stdout, stderr []byte
	truncated      bool
}

func (c *capped) stream(dst *[]byte) writerFunc {
	return func(p []byte) (int, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		keep := len(p)
		if c.limit > 0 && c.n+keep > c.limit {
			keep = c.limit - c.n
			c.truncated = true
		}
		*dst = append(*dst, p[:keep]...)
		c.n += keep
		return len(p), nil // discard the rest, keep draining
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
