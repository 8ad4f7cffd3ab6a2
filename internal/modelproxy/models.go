package modelproxy

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"
)

// modelCache keeps the upstream's model list for a minute.
type modelCache struct {
	mu   sync.Mutex
	body []byte
	at   time.Time
}

func (p *Proxy) listModels(w http.ResponseWriter, r *http.Request) {
	if _, err := p.instanceOf(r); err != nil {
		p.denied(w, err)
		return
	}
	if !p.Configured() {
		p.unconfigured(w)
		return
	}
	body, err := p.upstreamModels(r)
	if err != nil {
		// The upstream keeps its list to itself: offer the default model.
		type entry struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			OwnedBy string `json:"owned_by"`
		}
		list := struct {
			Object string  `json:"object"`
			Data   []entry `json:"data"`
		}{Object: "list", Data: []entry{}}
		if p.cfg.Model != "" {
			list.Data = append(list.Data, entry{ID: p.cfg.Model, Object: "model", OwnedBy: "svc"})
		}
		body, _ = json.Marshal(list)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

func (p *Proxy) upstreamModels(r *http.Request) ([]byte, error) {
	p.models.mu.Lock()
	defer p.models.mu.Unlock()
	if p.models.body != nil && time.Since(p.models.at) < time.Minute {
		return p.models.body, nil
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, p.cfg.Upstream+"/models", nil)
	if err != nil {
		return nil, err
	}
	if p.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil || resp.StatusCode != http.StatusOK || !json.Valid(b) {
		return nil, errUpstreamModels
	}
	p.models.body, p.models.at = b, time.Now()
	return b, nil
}

var errUpstreamModels = errors.New("upstream model list unavailable")
