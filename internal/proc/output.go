package proc

import (
	"fmt"
	"sync"
)

// Output collects a command's output up to a cap, keeping the head and the
// tail: the start of a build log says what ran, the end says how it failed,
// and the middle is what a model or a user can most afford to lose. It is
// safe for concurrent writes (stdout and stderr share one Output).
type Output struct {
	mu      sync.Mutex
	head    []byte
	tail    []byte // ring buffer of the last bytes
	start   int    // index of the oldest byte in tail once it is full
	headCap int
	tailCap int
	total   int64
}

// NewOutput keeps at most limit bytes: half from the start, half from the
// end. limit <= 0 keeps everything.
func NewOutput(limit int) *Output {
	if limit <= 0 {
		return &Output{headCap: -1}
	}
	return &Output{headCap: limit - limit/2, tailCap: limit / 2}
}

// NewTail keeps only the last limit bytes (a stderr tail for error messages).
func NewTail(limit int) *Output {
	return &Output{tailCap: limit}
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(p)
	o.total += int64(n)
	if o.headCap < 0 {
		o.head = append(o.head, p...)
		return n, nil
	}
	if room := o.headCap - len(o.head); room > 0 {
		k := min(room, len(p))
		o.head = append(o.head, p[:k]...)
		p = p[k:]
	}
	if o.tailCap == 0 || len(p) == 0 {
		return n, nil
	}
	if len(p) >= o.tailCap {
		o.tail = append(o.tail[:0], p[len(p)-o.tailCap:]...)
		o.start = 0
		return n, nil
	}
	if room := o.tailCap - len(o.tail); room > 0 {
		k := min(room, len(p))
		o.tail = append(o.tail, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 { // full ring: overwrite the oldest bytes
		k := copy(o.tail[o.start:], p)
		p = p[k:]
		o.start = (o.start + k) % o.tailCap
	}
	return n, nil
}

// Total is the number of bytes written, kept or not.
func (o *Output) Total() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.total
}

// Truncated reports whether bytes were dropped.
func (o *Output) Truncated() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.total > int64(len(o.head)+len(o.tail))
}

// String is the kept output; when bytes were dropped between head and tail
// a marker line says how many.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	tail := append(append([]byte(nil), o.tail[o.start:]...), o.tail[:o.start]...)
	dropped := o.total - int64(len(o.head)+len(tail))
	if dropped <= 0 {
		return string(o.head) + string(tail)
	}
	return fmt.Sprintf("%s\n[... %d bytes omitted ...]\n%s", o.head, dropped, tail)
}
