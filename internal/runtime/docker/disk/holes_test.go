package disk

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestDigHoles: written zeros become holes, data stays.
func TestDigHoles(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	want := append(append(make([]byte, 4<<20), bytes.Repeat([]byte("data"), 1<<14)...), make([]byte, 4<<20)...)
	if err := os.WriteFile(p, want, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := digHoles(p); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("content changed: %v", err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	if alloc := st.Blocks * 512; alloc > 1<<20 {
		t.Errorf("%d bytes still allocated of %d, want the zeros punched out", alloc, len(want))
	}
}
