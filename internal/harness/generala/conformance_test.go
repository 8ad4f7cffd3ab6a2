package generala_test

import (
	"testing"

	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/harness/generala"
	"github.com/svc-dev/svc/internal/harness/harnesstest"
)

// TestConformance runs the suite every harness passes, over HTTP through
// the real gateway, against general-a.
func TestConformance(t *testing.T) {
	p := harnesstest.Builtin(harness.GeneralA, generala.New)
	p.Titles, p.Renames, p.MessageCount, p.Preview = true, true, true, true
	harnesstest.Run(t, p)
}
