package sysimage

import (
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/jsonstream"
)

// A step that runs long is reported every interval with its last output
// line, so a build is never silent for minutes.
func TestBuildProgressHeartbeat(t *testing.T) {
	var progress strings.Builder
	start := time.Now()
	o := &buildOutput{b: &Builder{Progress: &progress}, name: "svc-workflow", start: start, step: start}
	o.beat(start.Add(time.Minute), 30*time.Second)
	if progress.Len() != 0 {
		t.Fatalf("a beat before the first step: %q", progress.String())
	}
	for _, line := range []string{"Step 15/24 : RUN npm install\n", " ---> Running in 0123456789ab\n", "added 1200 packages in 5m\n"} {
		o.message(jsonstream.Message{Stream: line})
	}
	progress.Reset()
	o.beat(time.Now().Add(10*time.Second), 30*time.Second)
	if progress.Len() != 0 {
		t.Fatalf("a beat 10 s into a step: %q", progress.String())
	}
	o.beat(time.Now().Add(31*time.Second), 30*time.Second)
	got := progress.String()
	if !strings.Contains(got, "svc-workflow") || !strings.Contains(got, "still on step 15/24: added 1200 packages in 5m") {
		t.Fatalf("heartbeat line %q", got)
	}
	// The next beat comes an interval after the last report, not at once.
	progress.Reset()
	o.beat(time.Now().Add(40*time.Second), 30*time.Second)
	if progress.Len() != 0 {
		t.Fatalf("a second beat 9 s after the first: %q", progress.String())
	}
}
