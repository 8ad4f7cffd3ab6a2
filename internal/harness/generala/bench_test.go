package generala

import (
	"context"
	"strings"
	"testing"

	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/modeltest"
)

// BenchmarkTurn is one general-a turn streaming a 500-chunk reply with no
// model delay (go test -bench Turn -cpuprofile to see where a turn goes).
func BenchmarkTurn(b *testing.B) {
	content := strings.Repeat("abcd", 500)
	srv, err := modeltest.Start(modeltest.Config{Fallback: func(modeltest.Request) modeltest.Reply {
		return modeltest.Reply{Content: content, ChunkSize: 4}
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	h, err := New(Config{Home: b.TempDir(), ModelBaseURL: srv.URL, Model: "m"})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	emit := func(harness.Event) error { return nil }
	b.ResetTimer()
	for b.Loop() {
		if _, err := h.Run(context.Background(), harness.Turn{Input: "x"}, emit); err != nil {
			b.Fatal(err)
		}
		h.Wait()
	}
}
