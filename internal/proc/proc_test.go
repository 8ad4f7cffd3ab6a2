package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// alive reports whether pid names a running (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] != 'Z'
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	for range 500 {
		b, err := os.ReadFile(path)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never written", path)
	return 0
}

func TestCancelKillsTheWholeGroup(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	// The child ignores SIGTERM, so only the SIGKILL after the grace ends it.
	script := `sh -c 'trap "" TERM; echo $$ > child.pid; while :; do sleep 1; done' & echo $$ > self.pid; wait`
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	p, err := Start(ctx, cmd, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	self, child := readPid(t, filepath.Join(dir, "self.pid")), readPid(t, filepath.Join(dir, "child.pid"))
	cancel()
	err = p.Wait()
	if !errors.Is(err, ErrStopped) {
		t.Fatalf("Wait: %v, want ErrStopped", err)
	}
	if alive(self) {
		t.Fatalf("leader %d still running", self)
	}
	// The child outlives the leader by at most the grace period.
	for i := 0; alive(child); i++ {
		if i > 300 {
			t.Fatalf("child %d survived the group kill", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestNormalExitAndCode(t *testing.T) {
	out := NewOutput(0)
	cmd := exec.Command("sh", "-c", "echo hi; echo err >&2; exit 3")
	cmd.Stdout, cmd.Stderr = out, out
	p, err := Start(context.Background(), cmd, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = p.Wait()
	if errors.Is(err, ErrStopped) || ExitCode(err) != 3 {
		t.Fatalf("Wait: %v (code %d)", err, ExitCode(err))
	}
	if got := out.String(); got != "hi\nerr\n" {
		t.Fatalf("output %q", got)
	}
}

func TestBackgroundChildHoldingPipeDoesNotBlockWait(t *testing.T) {
	out := NewOutput(0)
	// The grandchild keeps stdout open for 30s after the leader exits.
	cmd := exec.Command("sh", "-c", "sleep 30 & echo started")
	cmd.Stdout = out
	p, err := Start(context.Background(), cmd, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Wait() }()
	select {
	case err := <-done:
		if ExitCode(err) != 0 && !errors.Is(err, exec.ErrWaitDelay) {
			t.Fatalf("Wait: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Wait blocked on the grandchild's pipe")
	}
	_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
	if !strings.Contains(out.String(), "started") {
		t.Fatalf("output %q", out.String())
	}
}

func TestOutputKeepsHeadAndTail(t *testing.T) {
	o := NewOutput(10)
	for _, s := range []string{"abc", "defgh", "ijklmnop", "qrstuvwxyz"} {
		o.Write([]byte(s))
	}
	want := "abcde\n[... 16 bytes omitted ...]\nvwxyz"
	if got := o.String(); got != want || !o.Truncated() || o.Total() != 26 {
		t.Fatalf("got %q truncated=%v total=%d", got, o.Truncated(), o.Total())
	}
	small := NewOutput(10)
	small.Write([]byte("0123456789"))
	if small.String() != "0123456789" || small.Truncated() {
		t.Fatalf("exact fit: %q", small.String())
	}
	tail := NewTail(4)
	tail.Write([]byte("hello"))
	tail.Write([]byte(" w"))
	tail.Write([]byte("orld"))
	if got := tail.String(); got != "\n[... 7 bytes omitted ...]\norld" {
		t.Fatalf("tail %q", got)
	}
}

func TestOutputRingByteByByte(t *testing.T) {
	o := NewOutput(6)
	in := "the quick brown fox"
	for i := range len(in) {
		o.Write([]byte{in[i]})
	}
	if got := o.String(); got != "the\n[... 13 bytes omitted ...]\nfox" {
		t.Fatalf("got %q", got)
	}
}
