// Package gateway is svc-gateway, the server every system template runs on
// port 3737 (spec/gateway-api.md): agent turns as JSON or SSE with replay
// and cancel, sessions projected from the harnesses, the instance
// filesystem, health and version. It owns response records and event
// buffers; harnesses only run turns and report events (package harness).
package gateway

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/svc-dev/svc/internal/harness"
)

// TokenHeader carries the per-instance token the platform's edge adds.
const TokenHeader = "X-Svc-Gateway-Token"

// Registry is the set of harnesses provisioned on this instance.
type Registry struct {
	// Default is the instance's configured harness, used when a request
	// names none. It is usually, but not necessarily, provisioned: a
	// default that failed to start answers agent_unavailable.
	Default string
	// Harnesses are the provisioned harnesses, one per id.
	Harnesses []harness.Harness
}

// Server is the gateway. Create it with New, serve Handler, and Close it
// to cancel running turns.
type Server struct {
	cfg       Config
	log       *slog.Logger
	def       string
	harnesses map[string]harness.Harness
	records   *store
	contexts  *contextMemory
	handler   http.Handler

	// ctx is the parent of every turn: turns outlive the request that
	// started them and end only on cancel or Close.
	ctx     context.Context
	stop    context.CancelFunc
	turns   sync.WaitGroup
	mu      sync.Mutex
	closing bool
	closed  sync.Once

	// lastActivity is when a turn last started, emitted or ended (epoch
	// ms), for GET /v1/activity.
	lastActivity atomic.Int64
}

// New returns a gateway serving reg's harnesses.
func New(cfg Config, reg Registry, log *slog.Logger) (*Server, error) {
	if !slices.Contains(harness.IDs, reg.Default) {
		return nil, fmt.Errorf("default harness %q is not one of %v", reg.Default, harness.IDs)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		cfg:       cfg,
		log:       log,
		def:       reg.Default,
		harnesses: map[string]harness.Harness{},
		records:   newStore(cfg),
		contexts:  newContextMemory(cfg.MaxContexts),
	}
	for _, h := range reg.Harnesses {
		id := h.ID()
		if !slices.Contains(harness.IDs, id) {
			return nil, fmt.Errorf("harness id %q is not one of %v", id, harness.IDs)
		}
		if _, dup := s.harnesses[id]; dup {
			return nil, fmt.Errorf("harness %s registered twice", id)
		}
		s.harnesses[id] = h
	}
	s.ctx, s.stop = context.WithCancel(context.Background())
	s.handler = Authenticate(cfg.Token, s.routes())
	return s, nil
}

// Handler is the gateway's HTTP handler, authentication included.
func (s *Server) Handler() http.Handler { return s.handler }

// Close cancels every running turn and waits for them to settle.
func (s *Server) Close() error {
	s.closed.Do(func() {
		s.mu.Lock()
		s.closing = true
		s.mu.Unlock()
		s.stop()
		s.turns.Wait()
		s.records.close()
	})
	return nil
}

// resolveAgent maps a requested harness id to (id, harness); the harness is
// nil when the id is valid but not provisioned here.
func (s *Server) resolveAgent(param, id string) (string, harness.Harness, error) {
	if id == "" {
		id = s.def
	}
	if !slices.Contains(harness.IDs, id) {
		return "", nil, invalid(param, "unknown agent %q: one of %v", id, harness.IDs)
	}
	return id, s.harnesses[id], nil
}

// provisioned is resolveAgent for session and model calls, where an
// unprovisioned harness is a 503.
func (s *Server) provisioned(r *http.Request) (string, harness.Harness, error) {
	id, h, err := s.resolveAgent("agent", r.URL.Query().Get("agent"))
	if err != nil {
		return "", nil, err
	}
	if h == nil {
		return "", nil, unavailable(id)
	}
	return id, h, nil
}

func unavailable(id string) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Code: "agent_unavailable",
		Message: fmt.Sprintf("agent %s is not provisioned on this instance", id)}
}

// Authenticate admits requests carrying token in X-Svc-Gateway-Token.
// Without a configured token only loopback clients are served, for
// development. Failures use the flat transport body the edge also uses.
// The web tools' listeners (terminal, file browser, dashboard) sit behind
// the same check, so the edge authenticates them exactly like the gateway.
func Authenticate(token string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" {
			// Comparing digests keeps the comparison constant-time in the
			// token's length too.
			got := sha256.Sum256([]byte(r.Header.Get(TokenHeader)))
			if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
				writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "unauthorized"})
				return
			}
		} else if !loopback(r.RemoteAddr) {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "forbidden"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func loopback(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
