package runtimetest

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/runtime"
)

func readLogs(t *testing.T, in *instance, opts runtime.LogOptions) string {
	t.Helper()
	rc, err := in.d.Logs(ctx(t), in.id, opts)
	if err != nil {
		t.Fatalf("logs: %v", err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read logs: %v", err)
	}
	return string(b)
}

// waitLog polls the console until it holds want.
func waitLog(t *testing.T, in *instance, want string) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		logs := readLogs(t, in, runtime.LogOptions{})
		if strings.Contains(logs, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("console never showed %q:\n%s", want, logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// testLogsTail: the whole console has both streams as plain text; Tail
// returns exactly the last lines.
func testLogsTail(t *testing.T, s *suite) {
	in := s.running(t, s.spec())
	waitLog(t, in, "tick 3")
	in.stop(t) // a still console makes the tail exact
	all := readLogs(t, in, runtime.LogOptions{})
	// stdout and stderr interleave in arrival order, so look for lines.
	for _, want := range []string{"boot mark=conformance", "boot on stderr", "tick 1", "tick 2", "tick 3", "stopping"} {
		if !strings.Contains("\n"+all, "\n"+want+"\n") {
			t.Errorf("console lacks line %q:\n%q", want, all)
		}
	}
	lines := strings.SplitAfter(all, "\n")
	lines = lines[:len(lines)-1] // after the final newline
	tail := readLogs(t, in, runtime.LogOptions{Tail: 2})
	if want := strings.Join(lines[len(lines)-2:], ""); tail != want {
		t.Errorf("tail 2 = %q, want %q", tail, want)
	}
}

// testLogsFollow: a follow delivers lines as they are printed and ends when
// the container stops.
func testLogsFollow(t *testing.T, s *suite) {
	in := s.running(t, s.spec())
	waitLog(t, in, "tick 1")
	rc, err := in.d.Logs(ctx(t), in.id, runtime.LogOptions{Tail: 1, Follow: true})
	if err != nil {
		t.Fatalf("logs: %v", err)
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	// The tail line may be the boot line on stderr, which can land after
	// the first tick; the ticks that follow must come in order.
	var first int
	for {
		if !sc.Scan() {
			t.Fatalf("follow ended before a tick: %v", sc.Err())
		}
		if _, err := fmt.Sscanf(sc.Text(), "tick %d", &first); err == nil {
			break
		}
	}
	for want := first + 1; want <= first+2; want++ {
		if !sc.Scan() {
			t.Fatalf("follow ended before tick %d: %v", want, sc.Err())
		}
		if got := sc.Text(); got != fmt.Sprintf("tick %d", want) {
			t.Fatalf("followed line %q, want tick %d", got, want)
		}
	}
	in.stop(t)
	var rest []string
	for sc.Scan() {
		rest = append(rest, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("follow ended with %v", err)
	}
	if len(rest) == 0 || rest[len(rest)-1] != "stopping" {
		t.Errorf("follow after stop: %q, want it to end with the stop line", rest)
	}
}
