package edge

import (
	"errors"
	"sync"
	"time"
)

// ttlCache keeps lookups (instances, public hosts, keys) for a short TTL,
// so the hot path reads no database while revocations and state changes
// still reach the edge within seconds. Errors are cached too (an unknown
// host stays unknown for a TTL, a flood of them costs one read each).
type ttlCache[V any] struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu sync.Mutex
	m  map[string]cached[V]
}

type cached[V any] struct {
	v   V
	err error
	exp time.Time
}

func newCache[V any](ttl time.Duration, max int, now func() time.Time) *ttlCache[V] {
	return &ttlCache[V]{ttl: ttl, max: max, now: now, m: map[string]cached[V]{}}
}

// get returns the cached value of key, or loads and keeps it.
func (c *ttlCache[V]) get(key string, load func() (V, error)) (V, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok && now.Before(e.exp) {
		return e.v, e.err
	}
	v, err := load()
	var ee *Error
	if err == nil || errors.As(err, &ee) {
		c.put(key, v, err) // answers are kept, store failures are not
	}
	return v, err
}

// put stores a fresh value (the edge refreshes rows it has just read).
func (c *ttlCache[V]) put(key string, v V, err error) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		// Bounded: drop what expired, and everything if that is not enough
		// (a flood of distinct unknown keys or hosts).
		for k, e := range c.m {
			if !now.Before(e.exp) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= c.max {
			clear(c.m)
		}
	}
	c.m[key] = cached[V]{v: v, err: err, exp: now.Add(c.ttl)}
}

// forget drops key.
func (c *ttlCache[V]) forget(key string) {
	c.mu.Lock()
	delete(c.m, key)
	c.mu.Unlock()
}
