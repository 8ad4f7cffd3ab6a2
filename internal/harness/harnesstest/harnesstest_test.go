package harnesstest

import "testing"

// TestReference runs the suite against the minimal Reference harness, so
// the suite itself is known to pass for a correct harness.
func TestReference(t *testing.T) {
	Run(t, ReferenceProfile())
}
