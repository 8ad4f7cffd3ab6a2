// Package server assembles svcd from its parts: store, private registry,
// runtime driver, template and instance services, the hosting API and the
// reconciler. cmd/svcd and the end-to-end test harness both start it.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"sync"
	"time"

	"github.com/svc-dev/svc/internal/api"
	"github.com/svc-dev/svc/internal/auth"
	"github.com/svc-dev/svc/internal/edge"
	"github.com/svc-dev/svc/internal/hostname"
	"github.com/svc-dev/svc/internal/instance"
	"github.com/svc-dev/svc/internal/modelproxy"
	"github.com/svc-dev/svc/internal/registry"
	"github.com/svc-dev/svc/internal/runtime"
	"github.com/svc-dev/svc/internal/runtime/docker"
	"github.com/svc-dev/svc/internal/store"
	"github.com/svc-dev/svc/internal/template"
)

// Config is everything svcd serve needs.
type Config struct {
	// DataDir holds the database, the registry, instance disks and the
	// first API key.
	DataDir string
	// Listen is the API (and edge) address, e.g. 127.0.0.1:7070.
	Listen string
	// RegistryListen is the private registry's address; dockerd pulls
	// from it, so it stays on loopback.
	RegistryListen string
	// AppsDomain is the domain instance hosts live under.
	AppsDomain string
	// Network is the Docker network of instances.
	Network string
	// MinIdleTimeout lowers the idle_timeout_seconds floor (tests only).
	MinIdleTimeout int
	// ReconcileEvery is the reconciler's period (default 30s).
	ReconcileEvery time.Duration
	// BootTimeout bounds the boot probe (default 2m).
	BootTimeout time.Duration
	// StopGrace is how long a stop waits before killing (default 10s).
	StopGrace time.Duration
	// TLSCert and TLSKey, when set, make the listener serve HTTPS (and
	// HTTP/2) for the API and the edge.
	TLSCert, TLSKey string
	// WakeTimeout bounds how long the edge holds a request while its
	// instance wakes (default 3m).
	WakeTimeout time.Duration
	// IdleCheckEvery is the idle watcher's period (default 10s).
	IdleCheckEvery time.Duration
	// ActivityFlushEvery is how often traffic times reach the store for
	// other processes (default 5s).
	ActivityFlushEvery time.Duration
	// ModelUpstream, ModelAPIKey and Model configure the managed model
	// (an OpenAI-compatible upstream svcd forwards instances' calls to).
	ModelUpstream string
	ModelAPIKey   string
	Model         string
	// ModelPort is where instances reach the managed model, on the host's
	// address on the instance network (0: any free port).
	ModelPort int
	// Failpoint is called at named points of operations (crash tests).
	Failpoint func(name string)
	Log       *slog.Logger
}

// Server is a running svcd.
type Server struct {
	// URL is the hosting API's base URL.
	URL string
	// Key is the first API key when this start created the workspace.
	Key   string
	Store *store.Store

	Instances *instance.Service
	Templates *template.Service
	Registry  *registry.Registry
	Runtime   runtime.Driver
	Edge      *edge.Edge
	Activity  *edge.Activity
	Watcher   *edge.Watcher
	Model     *modelproxy.Proxy
	// ModelURL is the managed model's base URL as instances reach it.
	ModelURL string

	cfg     Config
	servers []*http.Server
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// Start opens the data directory, recovers interrupted operations and
// serves until Close.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.ReconcileEvery == 0 {
		cfg.ReconcileEvery = 30 * time.Second
	}
	if cfg.IdleCheckEvery == 0 {
		cfg.IdleCheckEvery = 10 * time.Second
	}
	if cfg.ActivityFlushEvery == 0 {
		cfg.ActivityFlushEvery = 5 * time.Second
	}
	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	cfg.DataDir = dataDir
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, filepath.Join(dataDir, "svc.db"))
	if err != nil {
		return nil, err
	}
	s := &Server{Store: st, cfg: cfg}
	if err := s.start(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Server) start(ctx context.Context) error {
	cfg := s.cfg
	install, err := s.Store.SetMetaOnce(ctx, "install_id", auth.Random(8, "abcdefghijklmnopqrstuvwxyz0123456789"))
	if err != nil {
		return err
	}
	regPassword, err := s.Store.SetMetaOnce(ctx, "registry_password", auth.Random(32, "abcdefghijklmnopqrstuvwxyz0123456789"))
	if err != nil {
		return err
	}

	// The private registry on its own loopback listener.
	regLn, err := net.Listen("tcp", cfg.RegistryListen)
	if err != nil {
		return fmt.Errorf("registry listener: %w", err)
	}
	reg, err := registry.New(ctx, registry.Config{Dir: filepath.Join(cfg.DataDir, "registry"), Username: "svcd", Password: regPassword, Logger: cfg.Log})
	if err != nil {
		regLn.Close()
		return err
	}
	reg.SetAddr(regLn.Addr().String())
	s.Registry = reg
	s.serve(regLn, reg.Handler(), false)
	// A separate `svcd edge` pulls (on a wake that recreates a container)
	// from where this process serves the registry.
	if err := s.Store.SetMeta(ctx, "registry_addr", regLn.Addr().String()); err != nil {
		return err
	}

	drv, err := docker.New(ctx, docker.Config{DataDir: cfg.DataDir, Install: install, Network: cfg.Network})
	if err != nil {
		return fmt.Errorf("docker: %w", err)
	}
	s.Runtime = drv

	// The managed model listens where containers reach the host, so it
	// works while the API stays on loopback.
	modelSecret, err := s.Store.SetMetaOnce(ctx, "model_secret", auth.Random(40, "abcdefghijklmnopqrstuvwxyz0123456789"))
	if err != nil {
		return err
	}
	s.Model = modelproxy.New(s.Store, modelproxy.Config{Upstream: cfg.ModelUpstream, APIKey: cfg.ModelAPIKey,
		Model: cfg.Model, Secret: []byte(modelSecret), Log: cfg.Log})
	hostAddr, err := drv.HostAddr(ctx)
	if err != nil {
		return err
	}
	modelLn, err := net.Listen("tcp", net.JoinHostPort(hostAddr.String(), strconv.Itoa(cfg.ModelPort)))
	if err != nil {
		return fmt.Errorf("managed model listener: %w", err)
	}
	s.ModelURL = "http://" + modelLn.Addr().String() + "/v1"
	s.serve(modelLn, s.Model.Handler(), false)
	// A separate `svcd edge` that recreates a container on a wake gives it
	// the same model env.
	if err := s.Store.SetMeta(ctx, "model_url", s.ModelURL); err != nil {
		return err
	}
	if err := s.Store.SetMeta(ctx, "model_default", cfg.Model); err != nil {
		return err
	}

	apiLn, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	names := s.names(apiLn)

	s.Templates = template.New(s.Store, importer{reg})
	s.Instances = instance.New(s.Store, s.Templates, drv, instance.Config{
		Names: names,
		Pull: func(repo, digest string) (string, *runtime.Auth) {
			a := reg.PullAuth()
			return reg.PullRef(repo, digest), &runtime.Auth{Username: a.Username, Password: a.Password}
		},
		Env:            modelEnv(s.ModelURL, s.Model),
		StopGrace:      cfg.StopGrace,
		BootTimeout:    cfg.BootTimeout,
		MinIdleTimeout: cfg.MinIdleTimeout,
		HostPaths:      []string{cfg.DataDir},
		HostCPUs:       goruntime.NumCPU(),
		Failpoint:      cfg.Failpoint,
		Log:            cfg.Log,
	})

	// Finish what a previous process left in flight, then sweep orphans,
	// before taking requests.
	if err := s.Instances.Recover(ctx); err != nil {
		apiLn.Close()
		return err
	}
	if err := s.Instances.Reconcile(ctx); err != nil {
		apiLn.Close()
		return err
	}
	urls, err := s.startEdge(ctx, names)
	if err != nil {
		apiLn.Close()
		return err
	}
	s.Watcher = edge.NewWatcher(s.Store, s.Instances, drv, s.Activity, nil, cfg.Log)
	runCtx := s.runCtx(ctx)
	s.wg.Add(3)
	go func() {
		defer s.wg.Done()
		s.Instances.Run(runCtx, cfg.ReconcileEvery)
	}()
	go func() {
		defer s.wg.Done()
		s.Activity.Run(runCtx, s.Store, cfg.ActivityFlushEvery, cfg.Log)
	}()
	go func() {
		defer s.wg.Done()
		s.Watcher.Run(runCtx, cfg.IdleCheckEvery)
	}()

	key, created, err := auth.Bootstrap(ctx, s.Store, cfg.DataDir)
	if err != nil {
		apiLn.Close()
		return err
	}
	if created {
		s.Key = key
	}
	apiHandler := api.New(s.Store, s.Templates, s.Instances, urls, cfg.Log).Handler()
	s.serve(apiLn, dispatch(names, s.Edge, apiHandler), cfg.TLSCert != "")
	return nil
}

// dispatch sends hosts under the apps domain to the edge and the rest to
// the API, so one listener serves both.
func dispatch(names hostname.Namer, edge, api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := names.Parse(r.Host); ok {
			edge.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// names sets the server's URL from the listener and returns the namer of
// instance URLs.
func (s *Server) names(ln net.Listener) hostname.Namer {
	_, portStr, _ := net.SplitHostPort(ln.Addr().String())
	port, _ := strconv.Atoi(portStr)
	scheme := "http"
	if s.cfg.TLSCert != "" {
		scheme = "https"
	}
	s.URL = scheme + "://" + loopbackName(ln.Addr()) + ":" + portStr
	return hostname.Namer{Domain: s.cfg.AppsDomain, Scheme: scheme, Port: port}
}

// runCtx is the context of the background loops, ended by Close.
func (s *Server) runCtx(ctx context.Context) context.Context {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	return runCtx
}

// modelEnv points an instance at the managed model at url with its own
// token. A create's env may override these (to bring its own provider).
func modelEnv(url string, model *modelproxy.Proxy) func(store.Instance) map[string]string {
	return func(in store.Instance) map[string]string {
		env := map[string]string{"SVC_MODEL_BASE_URL": url, "SVC_MODEL_API_KEY": model.Token(in.ID)}
		if m := model.DefaultModel(); m != "" {
			env["SVC_MODEL"] = m
		}
		return env
	}
}

// loopbackName is the host clients should use for addr: "localhost" for
// a loopback or unspecified address, the address otherwise.
func loopbackName(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || tcp.IP.IsLoopback() || tcp.IP.IsUnspecified() {
		return "localhost"
	}
	return tcp.IP.String()
}

// serve answers on ln until Close. There is no read or write timeout:
// streams through the edge (SSE, WebSocket, downloads) last as long as
// they last; only slow request headers are cut.
func (s *Server) serve(ln net.Listener, h http.Handler, tls bool) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	s.servers = append(s.servers, srv)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		var err error
		if tls {
			err = srv.ServeTLS(ln, s.cfg.TLSCert, s.cfg.TLSKey) // HTTP/2 included
		} else {
			err = srv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.cfg.Log.Error("serve", "addr", ln.Addr().String(), "err", err)
		}
	}()
}

// Close stops serving and the reconciler. Instances keep running.
func (s *Server) Close() error {
	if s.cancel != nil {
		s.cancel()
	}
	for _, srv := range s.servers {
		srv.Close()
	}
	s.wg.Wait()
	if s.Edge != nil {
		s.Edge.Close()
	}
	return s.Store.Close()
}
