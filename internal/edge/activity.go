package edge

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-dev/svc/internal/store"
)

// Activity is the in-memory record of when bytes last moved through an
// instance's URLs (or an exec ran). Connections to containers update it on
// every read and write, with no lock and no database write; Run flushes
// what changed to the store every few seconds so the idle watcher of
// another process (a separate `svcd edge`) sees it too.
type Activity struct {
	now func() time.Time

	mu sync.Mutex
	m  map[string]*mark
}

type mark struct {
	last    atomic.Int64 // epoch ms
	flushed int64        // under Activity.mu
}

// NewActivity returns an empty record.
func NewActivity(now func() time.Time) *Activity {
	if now == nil {
		now = time.Now
	}
	return &Activity{now: now, m: map[string]*mark{}}
}

// mark returns the instance's mark, made on first use.
func (a *Activity) mark(id string) *mark {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := a.m[id]
	if m == nil {
		m = &mark{}
		a.m[id] = m
	}
	return m
}

// touch records activity now.
func (a *Activity) touch(m *mark) {
	ms := a.now().UnixMilli()
	if ms > m.last.Load() {
		m.last.Store(ms)
	}
}

// Touch records activity of an instance now (exec calls it).
func (a *Activity) Touch(id string) { a.touch(a.mark(id)) }

// Last is the instance's last activity in epoch ms (0: none seen here).
func (a *Activity) Last(id string) int64 {
	a.mu.Lock()
	m := a.m[id]
	a.mu.Unlock()
	if m == nil {
		return 0
	}
	return m.last.Load()
}

// changed returns the marks newer than their last flush.
func (a *Activity) changed() map[string]int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]int64{}
	for id, m := range a.m {
		if last := m.last.Load(); last > m.flushed {
			out[id] = last
		}
	}
	return out
}

func (a *Activity) flushed(done map[string]int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, ms := range done {
		if m := a.m[id]; m != nil && ms > m.flushed {
			m.flushed = ms
		}
	}
}

// Flush writes what changed since the last flush.
func (a *Activity) Flush(ctx context.Context, st *store.Store) error {
	c := a.changed()
	if err := st.RecordActivity(ctx, c); err != nil {
		return err
	}
	a.flushed(c)
	return nil
}

// Run flushes every interval until ctx ends, and once more at the end.
func (a *Activity) Run(ctx context.Context, st *store.Store, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if err := a.Flush(context.WithoutCancel(ctx), st); err != nil {
				log.Warn("flush activity", "err", err)
			}
			return
		case <-t.C:
			if err := a.Flush(ctx, st); err != nil {
				log.Warn("flush activity", "err", err)
			}
		}
	}
}

// Retain forgets the instances not in live (deleted ones), once their
// last activity has been flushed.
func (a *Activity) Retain(live map[string]bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, m := range a.m {
		if !live[id] && m.last.Load() <= m.flushed {
			delete(a.m, id)
		}
	}
}
