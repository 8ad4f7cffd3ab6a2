package gateway

import (
	"container/list"
	"net/http"
	"sync"
	"time"

	"github.com/svc-dev/svc/internal/harness"
)

// store keeps response records and which session runs which response.
type store struct {
	cfg     Config
	mu      sync.Mutex
	records map[string]*record
	busy    map[string]string // sessionKey -> running response id
	timers  map[*time.Timer]struct{}
	closed  bool
	// added counts records, so "oldest" is exact even when several start
	// within the same millisecond.
	added uint64
}

func newStore(cfg Config) *store {
	return &store{cfg: cfg, records: map[string]*record{}, busy: map[string]string{}, timers: map[*time.Timer]struct{}{}}
}

func sessionKey(agent, sessionID string) string { return agent + "\x00" + sessionID }

// add registers a new running record, or returns session_busy.
func (s *store) add(r *record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if running, ok := s.busy[r.busyKey]; ok {
		return &Error{Status: http.StatusConflict, Code: "session_busy", ResponseID: running,
			Message: "a turn is running on this session", Hint: "reattach to response_id, cancel it, or use another session"}
	}
	s.dropOldestLocked()
	s.added++
	r.order = s.added
	s.records[r.id] = r
	s.busy[r.busyKey] = r.id
	return nil
}

// dropOldestLocked makes room for one record by dropping the oldest
// finished ones. Running records are never dropped: their number is
// bounded by the sessions in use, and dropping one would lose its cancel.
func (s *store) dropOldestLocked() {
	for len(s.records) >= s.cfg.MaxRecords {
		var oldest *record
		for _, r := range s.records {
			if r.settledAt().IsZero() {
				continue
			}
			if oldest == nil || r.order < oldest.order {
				oldest = r
			}
		}
		if oldest == nil {
			return
		}
		delete(s.records, oldest.id)
	}
}

func (s *store) get(id string) (*record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.records[id]
	return r, ok
}

// active is the running response of a session, or "".
func (s *store) active(agent, sessionID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.busy[sessionKey(agent, sessionID)]
}

// release frees the record's session before its terminal event goes out,
// so a client that reacts to the terminal event can send the next turn.
func (s *store) release(r *record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy[r.busyKey] == r.id {
		delete(s.busy, r.busyKey)
	}
}

// finished schedules the expiry of a settled record's buffer and then of
// the record itself.
func (s *store) finished(r *record) {
	s.after(s.cfg.BufferTTL, r.expire)
	s.after(s.cfg.RecordTTL, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.records[r.id] == r {
			delete(s.records, r.id)
		}
	})
}

func (s *store) after(d time.Duration, f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		s.mu.Lock()
		delete(s.timers, t)
		s.mu.Unlock()
		f()
	})
	s.timers[t] = struct{}{}
}

// close stops the expiry timers.
func (s *store) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for t := range s.timers {
		t.Stop()
	}
	clear(s.timers)
}

// contextMemory is the last context reported per session, least recently
// reported dropped first.
type contextMemory struct {
	mu    sync.Mutex
	max   int
	order *list.List // of contextEntry, front = most recent
	index map[string]*list.Element
}

type contextEntry struct {
	key string
	ctx harness.Context
}

func newContextMemory(max int) *contextMemory {
	return &contextMemory{max: max, order: list.New(), index: map[string]*list.Element{}}
}

func (m *contextMemory) put(key string, c harness.Context) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.index[key]; ok {
		e.Value = contextEntry{key, c}
		m.order.MoveToFront(e)
		return
	}
	m.index[key] = m.order.PushFront(contextEntry{key, c})
	for m.order.Len() > m.max {
		last := m.order.Back()
		m.order.Remove(last)
		delete(m.index, last.Value.(contextEntry).key)
	}
}

func (m *contextMemory) get(key string) *harness.Context {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.index[key]; ok {
		c := e.Value.(contextEntry).ctx
		return &c
	}
	return nil
}

func (m *contextMemory) forget(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.index[key]; ok {
		m.order.Remove(e)
		delete(m.index, key)
	}
}
