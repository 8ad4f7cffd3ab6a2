package docker

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/client"
	"golang.org/x/sys/unix"
)

// killExec kills an exec'd command: its process group (runc makes the
// command a session and group leader) and every descendant, so a shell's
// children die with it. The engine reports the command's host pid and
// svcd runs as root on the Docker host.
//
// A pidfd is taken before checking that the exec still runs: if it does,
// the pid cannot have been reused, and the pidfd names the right process.
func (d *Driver) killExec(ctx context.Context, execID string) {
	for range 100 {
		res, err := d.c.ExecInspect(ctx, execID, client.ExecInspectOptions{})
		if err != nil || exited(res) {
			return
		}
		if res.Running && res.PID > 0 {
			d.killTree(ctx, execID, res.PID)
			return
		}
		// Not started yet: no pid to kill yet.
		time.Sleep(10 * time.Millisecond)
	}
}

func (d *Driver) killTree(ctx context.Context, execID string, pid int) {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return // already gone
	}
	defer unix.Close(pidfd)
	if res, err := d.c.ExecInspect(ctx, execID, client.ExecInspectOptions{}); err != nil || !res.Running {
		return
	}
	victims := descendants(pid)
	_ = unix.Kill(-pid, unix.SIGKILL)
	_ = unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0)
	for _, p := range victims {
		_ = unix.Kill(p, unix.SIGKILL)
	}
}

// descendants walks /proc for the processes below pid.
func descendants(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	children := map[int][]int{}
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// Fields after the command name, which may hold spaces and ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		self, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		children[ppid] = append(children[ppid], self)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}
