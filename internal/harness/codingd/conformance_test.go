package codingd_test

import (
	"testing"

	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/harness/codingd"
	"github.com/svc-dev/svc/internal/harness/harnesstest"
)

// TestConformance runs the suite every harness passes, over HTTP through
// the real gateway, against coding-d.
func TestConformance(t *testing.T) {
	p := harnesstest.Builtin(harness.CodingD, codingd.New)
	p.Renames, p.MessageCount, p.Preview, p.MintsSessionIDs = true, true, true, true
	// Provider kinds pass through, as the spec allows.
	p.ContextLengthCode = "context_length"
	harnesstest.Run(t, p)
}
