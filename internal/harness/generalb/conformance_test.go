package generalb_test

import (
	"testing"

	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/harness/generalb"
	"github.com/svc-dev/svc/internal/harness/harnesstest"
)

// TestConformance runs the suite every harness passes, over HTTP through
// the real gateway, against general-b.
func TestConformance(t *testing.T) {
	p := harnesstest.Builtin(harness.GeneralB, generalb.New)
	p.Renames = true
	p.StopCommands = []string{"stop", "exit"}
	p.ContextLengthCode = "context_length"
	harnesstest.Run(t, p)
}
