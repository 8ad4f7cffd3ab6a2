package gateway

import (
	"container/heap"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// listFiles is GET /v1/files: one level, directories first, then names
// case-insensitively; only the first MaxListEntries after sorting.
func (s *Server) listFiles(w http.ResponseWriter, r *http.Request) error {
	dir, err := s.dirParam(r)
	if err != nil {
		return err
	}
	kept, truncated, err := firstEntries(dir, s.cfg.MaxListEntries)
	if err != nil {
		return fileError(err, dir)
	}
	entries := make([]fileEntry, 0, len(kept))
	for _, d := range kept {
		info, err := d.Info()
		if err != nil {
			continue // removed since it was read
		}
		entries = append(entries, entryOf(filepath.Join(dir, d.Name()), info))
	}
	var parent *string
	if dir != "/" {
		p := filepath.Dir(dir)
		parent = &p
	}
	return writeJSON(w, http.StatusOK, struct {
		Path       string      `json:"path"`
		ParentPath *string     `json:"parentPath"`
		Entries    []fileEntry `json:"entries"`
		Truncated  bool        `json:"truncated"`
	}{dir, parent, entries, truncated})
}

// firstEntries reads a directory of any size keeping only the first max
// entries in listing order, so memory is bounded by max, not by the
// directory.
func firstEntries(dir string, max int) ([]fs.DirEntry, bool, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	h := &entryHeap{}
	truncated := false
	for {
		batch, err := f.ReadDir(512)
		for _, d := range batch {
			heap.Push(h, listed{d: d, dir: d.IsDir(), lower: strings.ToLower(d.Name())})
			if h.Len() > max {
				heap.Pop(h)
				truncated = true
			}
		}
		if errors.Is(err, io.EOF) || (err == nil && len(batch) == 0) {
			break
		}
		if err != nil {
			return nil, false, err
		}
	}
	slices.SortFunc(*h, compareListed)
	out := make([]fs.DirEntry, len(*h))
	for i, l := range *h {
		out[i] = l.d
	}
	return out, truncated, nil
}

// listed is a directory entry with its sort key computed once.
type listed struct {
	d     fs.DirEntry
	dir   bool
	lower string
}

// compareListed is the listing order: directories (not links to them)
// first, then case-insensitive name, then exact name for a stable order.
func compareListed(a, b listed) int {
	if a.dir != b.dir {
		if a.dir {
			return -1
		}
		return 1
	}
	if c := strings.Compare(a.lower, b.lower); c != 0 {
		return c
	}
	return strings.Compare(a.d.Name(), b.d.Name())
}

// entryHeap is a max-heap in listing order: its top is the entry to drop.
type entryHeap []listed

func (h entryHeap) Len() int           { return len(h) }
func (h entryHeap) Less(i, j int) bool { return compareListed(h[i], h[j]) > 0 }
func (h entryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *entryHeap) Push(x any)        { *h = append(*h, x.(listed)) }
func (h *entryHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
