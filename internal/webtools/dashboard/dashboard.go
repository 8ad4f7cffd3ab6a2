// Package dashboard is the small instance dashboard svc-gateway serves
// (port 9119 in svc-general): the instance id, the gateway's version, the
// default harness and its health, disk and memory use read inside the
// container, and links to the instance's desktop, terminal and file
// browser. The page (assets/) polls ./api/status.
package dashboard

import (
	"context"
	"embed"
	"encoding/json"
	"io/fs"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/svc-dev/svc/internal/gateway"
	"github.com/svc-dev/svc/internal/webtools"
)

//go:embed assets
var assets embed.FS

// Config is what the dashboard shows and where it reads it.
type Config struct {
	InstanceID  string // SVC_INSTANCE_ID
	InstanceURL string // SVC_INSTANCE_URL: http(s)://{id}.{domain}[:port]
	Version     string // the gateway's
	Home        string // the agent's home: its filesystem is the instance disk
	// Tools are linked from the page, each at its per-port URL.
	Tools []Tool
	// Health probes the default harness (gateway.Server.Health).
	Health func(ctx context.Context, agent string) (gateway.HealthStatus, error)
	// Root is where /proc and /sys are read ("/" unless testing).
	Root string
}

// Status is the body of GET /api/status.
type Status struct {
	InstanceID  string  `json:"instance_id"`
	InstanceURL string  `json:"instance_url"`
	Name        string  `json:"name"`
	Version     string  `json:"version"`
	Agent       string  `json:"agent"`
	Healthy     bool    `json:"healthy"`
	Hint        string  `json:"hint,omitempty"` // what would make the harness healthy
	Disks       []Disk  `json:"disks"`
	Memory      *Memory `json:"memory"`
	Tools       []Tool  `json:"tools"`
}

// Handler serves the page and its status. It does not authenticate:
// serve it behind webtools.Protect.
func Handler(cfg Config, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Root == "" {
		cfg.Root = "/"
	}
	static, _ := fs.Sub(assets, "assets")
	mux := http.NewServeMux()
	mux.Handle("GET /api/status", webtools.Handle(log, func(w http.ResponseWriter, r *http.Request) error {
		st := status(r.Context(), cfg, log)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		return json.NewEncoder(w).Encode(st)
	}))
	mux.Handle("/", webtools.Static(static))
	return mux
}

// status gathers everything; a part that cannot be read is left out and
// logged, so the rest still shows.
func status(ctx context.Context, cfg Config, log *slog.Logger) Status {
	st := Status{InstanceID: cfg.InstanceID, InstanceURL: cfg.InstanceURL, Name: "svc-gateway", Version: cfg.Version}
	st.Tools = slices.Clone(cfg.Tools)
	for i := range st.Tools {
		st.Tools[i].URL = portURL(cfg.InstanceURL, st.Tools[i].Port, st.Tools[i].Path)
	}
	probed := make(chan struct{})
	go func() {
		probe(ctx, st.Tools, 300*time.Millisecond)
		close(probed)
	}()
	if hs, err := cfg.Health(ctx, ""); err != nil {
		log.Warn("dashboard: health", "err", err)
	} else {
		st.Agent, st.Healthy, st.Hint = hs.Agent, hs.Healthy, hs.Hint
	}
	st.Disks = readDisks([]Disk{{Label: "Home", Path: cfg.Home}, {Label: "System", Path: "/"}})
	if m, err := readMemory(cfg.Root); err != nil {
		log.Warn("dashboard: memory", "err", err)
	} else {
		st.Memory = &m
	}
	<-probed
	return st
}
