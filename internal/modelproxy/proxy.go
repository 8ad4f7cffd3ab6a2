// Package modelproxy is the managed model: an OpenAI-compatible endpoint
// svcd serves to instances (chat completions, streaming or not, and the
// model list). Each instance authenticates with its own token; calls are
// forwarded to the operator's upstream (OpenAI, vLLM, Ollama, anything
// compatible) and recorded per instance with their token counts, which
// metering and budgets build on.
package modelproxy

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/svc-dev/svc/internal/store"
)

// Config configures the proxy.
type Config struct {
	// Upstream is the operator's OpenAI-compatible base URL (ending in
	// /v1); empty means no managed model is configured.
	Upstream string
	// APIKey authenticates svcd to the upstream.
	APIKey string
	// Model is the default model for requests that name none.
	Model string
	// Secret signs instance tokens.
	Secret []byte
	Log    *slog.Logger
}

// Proxy serves the managed model.
type Proxy struct {
	cfg    Config
	st     *store.Store
	client *http.Client
	models modelCache
}

// New returns a proxy.
func New(st *store.Store, cfg Config) *Proxy {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	cfg.Upstream = strings.TrimRight(cfg.Upstream, "/")
	// No overall timeout: a streamed completion can run for many minutes.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = 10 * time.Minute
	return &Proxy{cfg: cfg, st: st, client: &http.Client{Transport: tr}}
}

// Configured reports whether an upstream is set.
func (p *Proxy) Configured() bool { return p.cfg.Upstream != "" }

// DefaultModel is the model requests without one get.
func (p *Proxy) DefaultModel() string { return p.cfg.Model }

const tokenPrefix = "svcm_"

// Token is the model credential of an instance: its id and an HMAC of it,
// so verifying needs no storage and a token names its instance.
func (p *Proxy) Token(instanceID string) string {
	return tokenPrefix + instanceID + "_" + p.mac(instanceID)
}

func (p *Proxy) mac(id string) string {
	m := hmac.New(sha256.New, p.cfg.Secret)
	m.Write([]byte("model-token:" + id))
	return hex.EncodeToString(m.Sum(nil))
}

// instanceOf returns the live instance a bearer token belongs to.
func (p *Proxy) instanceOf(r *http.Request) (store.Instance, error) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return store.Instance{}, errUnauthorized
	}
	id, mac, ok := strings.Cut(strings.TrimPrefix(tok, tokenPrefix), "_")
	if !ok || !strings.HasPrefix(tok, tokenPrefix) || !hmac.Equal([]byte(mac), []byte(p.mac(id))) {
		return store.Instance{}, errUnauthorized
	}
	in, err := p.st.Instance(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return in, errUnauthorized
	}
	return in, err
}

var errUnauthorized = errors.New("unauthorized")

// Handler serves /v1/chat/completions and /v1/models.
func (p *Proxy) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", p.chat)
	mux.HandleFunc("GET /v1/models", p.listModels)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "the managed model serves POST /v1/chat/completions and GET /v1/models", "")
	})
	return mux
}

// writeError answers in the OpenAI error shape, with svc's hint field,
// which the built-in agents show as the turn error's hint.
func writeError(w http.ResponseWriter, status int, code, msg, hint string) {
	body := map[string]any{"message": msg, "type": "svc_managed_model", "code": code}
	if hint != "" {
		body["hint"] = hint
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": body})
}

const unconfiguredHint = "the svc operator must configure a model upstream: start svcd with --model-upstream URL " +
	"(an OpenAI-compatible base URL ending in /v1) and --model-api-key KEY, or set SVC_MODEL_UPSTREAM and SVC_MODEL_API_KEY"

func (p *Proxy) unconfigured(w http.ResponseWriter) {
	writeError(w, http.StatusServiceUnavailable, "model_upstream_unconfigured",
		"no managed model is configured on this svc server", unconfiguredHint)
}
