package agent

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"
)

// ModelInfo is one model the endpoint lists.
type ModelInfo struct {
	ID string
	// ContextWindow is 0 when the endpoint does not say.
	ContextWindow int64
}

// ListModels asks the endpoint's GET /models. Window sizes come from the
// fields servers use for it: context_window (the managed model),
// max_model_len (vLLM), context_length (OpenRouter).
func (c *Client) ListModels(ctx context.Context) ([]ModelInfo, int, error) {
	if !c.Configured() {
		return nil, 0, NotConfigured()
	}
	req, err := c.newRequest(ctx, http.MethodGet, "/models", nil)
	if err != nil {
		return nil, 0, err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, 0, c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, resp.StatusCode, c.transportError(ctx, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, resp.StatusCode, statusError(resp.StatusCode, b)
	}
	var body struct {
		Data []struct {
			ID            string `json:"id"`
			ContextWindow int64  `json:"context_window"`
			MaxModelLen   int64  `json:"max_model_len"`
			ContextLength int64  `json:"context_length"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		return nil, resp.StatusCode, &apiErr{"model list is not JSON: " + err.Error()}
	}
	out := make([]ModelInfo, 0, len(body.Data))
	for _, m := range body.Data {
		if m.ID == "" {
			continue
		}
		w := m.ContextWindow
		if w == 0 {
			w = m.MaxModelLen
		}
		if w == 0 {
			w = m.ContextLength
		}
		out = append(out, ModelInfo{ID: m.ID, ContextWindow: w})
	}
	return out, resp.StatusCode, nil
}

type apiErr struct{ msg string }

func (e *apiErr) Error() string { return e.msg }

// Catalog caches the endpoint's model list and doubles as the health probe:
// a harness is healthy when an endpoint is configured and its /models
// answered (2xx, or 404 from servers without a listing) within the TTL.
type Catalog struct {
	client *Client
	ttl    time.Duration

	fetch   sync.Mutex // one probe at a time; others wait for its answer
	mu      sync.Mutex
	models  []ModelInfo
	checked time.Time
	healthy bool
	err     error // the last probe's failure, nil when it answered
}

// NewCatalog caches answers for ttl (default 30 seconds).
func NewCatalog(c *Client, ttl time.Duration) *Catalog {
	if ttl <= 0 {
		ttl = 30 * time.Second
	}
	return &Catalog{client: c, ttl: ttl}
}

func (c *Catalog) refresh(ctx context.Context) {
	c.fetch.Lock()
	defer c.fetch.Unlock()
	c.mu.Lock()
	fresh := !c.checked.IsZero() && time.Since(c.checked) < c.ttl
	c.mu.Unlock()
	if fresh || !c.client.Configured() {
		return
	}
	probe, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	models, status, err := c.client.ListModels(probe)
	c.mu.Lock()
	defer c.mu.Unlock()
	if ctx.Err() != nil {
		// The caller gave up; keep the previous answer without a new time.
		return
	}
	c.checked = time.Now()
	c.healthy = err == nil || status == http.StatusNotFound
	c.err = err
	if err == nil {
		c.models = models
	}
}

// Models is the cached list (possibly stale when the endpoint is down).
func (c *Catalog) Models(ctx context.Context) []ModelInfo {
	c.refresh(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]ModelInfo(nil), c.models...)
}

// Healthy probes the endpoint when the last answer is older than the TTL.
func (c *Catalog) Healthy(ctx context.Context) bool {
	if !c.client.Configured() {
		return false
	}
	c.refresh(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.healthy
}

// Window is the listed context window of model, 0 when unknown.
func (c *Catalog) Window(ctx context.Context, model string) int64 {
	for _, m := range c.Models(ctx) {
		if m.ID == model {
			return m.ContextWindow
		}
	}
	return 0
}

// Err is why the last probe of the endpoint failed (a turn error with the
// endpoint's message and hint), nil when it answered.
func (c *Catalog) Err(ctx context.Context) error {
	c.refresh(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}
