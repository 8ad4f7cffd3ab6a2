// Package proc starts child processes in their own process group and stops
// the whole group when the caller's context ends: SIGTERM first, SIGKILL
// after a grace period. Tools that run shell commands and adapters that run
// agent CLIs share it, so "cancel stops everything the turn started" is
// implemented once.
package proc

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// DefaultGrace is how long a group gets between SIGTERM and SIGKILL.
const DefaultGrace = 2 * time.Second

// Process is a started command whose group is killed when its context ends.
type Process struct {
	cmd   *exec.Cmd
	grace time.Duration
	done  chan struct{} // closed when Wait returns
	// stopped is closed once the group was signalled because ctx ended.
	stopped chan struct{}
}

// Start starts cmd in a new process group. When ctx ends the group gets
// SIGTERM, then SIGKILL after grace (DefaultGrace when zero). cmd must not
// have been started and must not set SysProcAttr.Setpgid itself.
func Start(ctx context.Context, cmd *exec.Cmd, grace time.Duration) (*Process, error) {
	if grace <= 0 {
		grace = DefaultGrace
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	// A background grandchild can keep our output pipes open after the
	// leader exits; WaitDelay stops Wait from blocking on it forever.
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = grace
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, grace: grace, done: make(chan struct{}), stopped: make(chan struct{})}
	go p.watch(ctx)
	return p, nil
}

func (p *Process) watch(ctx context.Context) {
	select {
	case <-p.done:
		return
	case <-ctx.Done():
	}
	close(p.stopped)
	pgid := -p.cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	t := time.NewTimer(p.grace)
	defer t.Stop()
	select {
	case <-p.done:
		// The leader exited; members that ignored SIGTERM still go.
		_ = syscall.Kill(pgid, syscall.SIGKILL)
	case <-t.C:
		_ = syscall.Kill(pgid, syscall.SIGKILL)
	}
}

// Pid is the process (and group) id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Wait waits for the command to exit. When the context ended first the
// error is ErrStopped (wrapping the exit error).
func (p *Process) Wait() error {
	err := p.cmd.Wait()
	close(p.done)
	select {
	case <-p.stopped:
		return errors.Join(ErrStopped, err)
	default:
	}
	return err
}

// ErrStopped reports that the process was stopped because its context ended.
var ErrStopped = errors.New("process stopped")

// ExitCode is the exit status of a finished command, -1 when it was killed
// by a signal or did not run.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}
