package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"time"

	"github.com/svc-dev/svc/internal/edge"
	"github.com/svc-dev/svc/internal/hostname"
	"github.com/svc-dev/svc/internal/instance"
	"github.com/svc-dev/svc/internal/modelproxy"
	"github.com/svc-dev/svc/internal/runtime"
	"github.com/svc-dev/svc/internal/runtime/docker"
	"github.com/svc-dev/svc/internal/store"
	"github.com/svc-dev/svc/internal/template"
)

// startEdge makes this process's edge: the signing secret (made at the
// first start), the activity record (exec feeds it too) and the handler.
// It returns the signed-URL minting the API serves.
func (s *Server) startEdge(ctx context.Context, names hostname.Namer) (edge.URLs, error) {
	signer, err := edge.LoadSigner(ctx, s.Store, nil)
	if err != nil {
		return edge.URLs{}, err
	}
	s.Activity = edge.NewActivity(nil)
	s.Edge = edge.New(edge.Config{
		Names:       names,
		Secure:      s.cfg.TLSCert != "",
		WakeTimeout: s.cfg.WakeTimeout,
		Log:         s.cfg.Log,
	}, s.Store, s.Instances, s.Runtime, signer, s.Activity)
	s.Instances.SetHooks(instance.Hooks{Activity: s.Activity.Touch, Asleep: s.Edge.Forget})
	return edge.URLs{Signer: signer, Names: names, Instances: s.Instances}, nil
}

// StartEdge runs the edge role alone (`svcd edge`) on the data directory
// of an installation that `svcd serve` set up and runs: same database,
// same Docker host. It routes, authenticates and wakes; the serve process
// keeps the API, the reconciler and the idle watcher, which reads the
// traffic this process flushes to the store.
func StartEdge(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.ActivityFlushEvery == 0 {
		cfg.ActivityFlushEvery = 5 * time.Second
	}
	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	cfg.DataDir = dataDir
	dbPath := filepath.Join(dataDir, "svc.db")
	if _, err := os.Stat(dbPath); err != nil {
		return nil, fmt.Errorf("no installation in %s: run svcd serve first", dataDir)
	}
	st, err := store.Open(ctx, dbPath)
	if err != nil {
		return nil, err
	}
	s := &Server{Store: st, cfg: cfg}
	if err := s.startEdgeOnly(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Server) startEdgeOnly(ctx context.Context) error {
	cfg := s.cfg
	meta := map[string]string{}
	for _, k := range []string{"install_id", "registry_addr", "registry_password", "model_secret", "model_url"} {
		v, err := s.Store.Meta(ctx, k)
		if err != nil {
			return err
		}
		if v == "" {
			return fmt.Errorf("installation not set up (%s missing): run svcd serve first", k)
		}
		meta[k] = v
	}
	drv, err := docker.New(ctx, docker.Config{DataDir: cfg.DataDir, Install: meta["install_id"], Network: cfg.Network})
	if err != nil {
		return fmt.Errorf("docker: %w", err)
	}
	s.Runtime = drv
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	names := s.names(ln)
	s.Templates = template.New(s.Store, nil) // wakes resolve no templates
	// Only to mint the model tokens of containers a wake recreates; the
	// managed model itself is served by svcd serve.
	defaultModel, err := s.Store.Meta(ctx, "model_default")
	if err != nil {
		ln.Close()
		return err
	}
	model := modelproxy.New(s.Store, modelproxy.Config{Model: defaultModel, Secret: []byte(meta["model_secret"]), Log: cfg.Log})
	s.Instances = instance.New(s.Store, s.Templates, drv, instance.Config{
		Names: names,
		Pull: func(repo, digest string) (string, *runtime.Auth) {
			return meta["registry_addr"] + "/" + repo + "@" + digest, &runtime.Auth{Username: "svcd", Password: meta["registry_password"]}
		},
		Env:            modelEnv(meta["model_url"], model),
		StopGrace:      cfg.StopGrace,
		BootTimeout:    cfg.BootTimeout,
		MinIdleTimeout: cfg.MinIdleTimeout,
		HostPaths:      []string{cfg.DataDir},
		HostCPUs:       goruntime.NumCPU(),
		Log:            cfg.Log,
	})
	if _, err := s.startEdge(ctx, names); err != nil {
		ln.Close()
		return err
	}
	runCtx := s.runCtx(ctx)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.Activity.Run(runCtx, s.Store, cfg.ActivityFlushEvery, cfg.Log)
	}()
	s.serve(ln, dispatch(names, s.Edge, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Only instance hosts live here; the API is served by svcd serve.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":"not_found"}` + "\n"))
	})), cfg.TLSCert != "")
	return nil
}
