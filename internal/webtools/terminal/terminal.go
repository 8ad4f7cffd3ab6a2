// Package terminal is the web terminal svc-gateway serves (port 7681 in
// svc-general): a page running xterm.js (vendored from npm into assets/ by
// scripts/xterm.sh) that opens a WebSocket at ./ws, and behind it one login
// shell on its own pty per connection, ended when the connection ends.
//
// The WebSocket protocol: binary messages carry terminal bytes both ways;
// a text message from the page is a JSON control message, today only
// {"type":"resize","cols":N,"rows":N}. The initial size comes in the query
// (?cols=N&rows=N) so the first prompt is drawn at the right width. When
// the shell exits the server closes with status 1000, reason "exited".
package terminal

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/svc-dev/svc/internal/webtools"
)

//go:embed assets
var assets embed.FS

// Config is where and how shells run.
type Config struct {
	// Home is the shell's working directory and $HOME: the agent's home.
	Home string
	// Shell is the program to run; empty means the user's login shell
	// from /etc/passwd (then $SHELL, bash, sh).
	Shell string
	// Env is the shell's environment before the terminal's own variables;
	// the gateway's credential is always removed from it.
	Env []string
	// Grace is how long processes have after the hang-up signal before
	// they are killed.
	Grace time.Duration
	// PingInterval keeps idle connections alive through proxies and
	// notices clients that vanished without closing.
	PingInterval time.Duration
	// WriteTimeout drops a client that cannot take output for this long.
	WriteTimeout time.Duration
}

// DefaultConfig is the production setting for home.
func DefaultConfig(home string, env []string) Config {
	return Config{Home: home, Env: env, Grace: 2 * time.Second, PingInterval: 30 * time.Second, WriteTimeout: time.Minute}
}

// Server serves the terminal page and its shells.
type Server struct {
	cfg     Config
	log     *slog.Logger
	handler http.Handler

	mu     sync.Mutex
	closed bool
	ctx    context.Context // ends every session on Close
	stop   context.CancelFunc
	live   sync.WaitGroup
}

// New returns a terminal server. Its handler does not authenticate: serve
// it behind webtools.Protect.
func New(cfg Config, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: log}
	s.ctx, s.stop = context.WithCancel(context.Background())
	static, _ := fs.Sub(assets, "assets")
	mux := http.NewServeMux()
	mux.Handle("GET /ws", webtools.Handle(log, s.serveWS))
	mux.Handle("/", webtools.Static(static))
	s.handler = mux
	return s
}

// Handler serves the page, its assets and the WebSocket.
func (s *Server) Handler() http.Handler { return s.handler }

// Close ends every session (their shells hung up, then killed) and waits
// for them. WebSockets are hijacked connections, which http.Server's
// Shutdown neither tracks nor closes, so the gateway calls this on exit.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.stop()
	s.live.Wait()
	return nil
}

// begin counts a session in, unless the server is closing.
func (s *Server) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.live.Add(1)
	return true
}

// size reads the initial terminal size from the query; out-of-range or
// missing values fall back to 80x24.
func size(r *http.Request) (cols, rows uint16) {
	parse := func(name string, def uint16) uint16 {
		n, err := strconv.Atoi(r.URL.Query().Get(name))
		if err != nil || n < 1 || n > 1000 {
			return def
		}
		return uint16(n)
	}
	return parse("cols", 80), parse("rows", 24)
}
