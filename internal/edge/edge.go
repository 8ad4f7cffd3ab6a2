// Package edge serves instance traffic: it routes a Host under the apps
// domain to one port of one instance ({id}, {id}-{port}, public slugs and
// {prefix}-{id}), checks the workspace key or a signed URL, answers /health
// itself, holds requests while a sleeping instance wakes, streams bodies
// both ways without buffering, and accounts the bytes as activity for the
// idle watcher that puts auto-sleep instances to sleep.
package edge

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"time"

	"github.com/svc-dev/svc/internal/auth"
	"github.com/svc-dev/svc/internal/hostname"
	"github.com/svc-dev/svc/internal/instance"
	"github.com/svc-dev/svc/internal/runtime"
	"github.com/svc-dev/svc/internal/store"
	"github.com/svc-dev/svc/internal/template"
)

// Config tunes the edge.
type Config struct {
	Names hostname.Namer
	// Secure marks cookies Secure (the edge serves TLS).
	Secure bool
	// WakeTimeout bounds how long a request is held while its instance
	// wakes (default 3m, the spec's budget).
	WakeTimeout time.Duration
	// CacheTTL is how long instance rows and public hosts are reused
	// (default 1s): revocations and state changes apply within it.
	CacheTTL time.Duration
	// KeyTTL is how long a key lookup is reused (default 10s).
	KeyTTL time.Duration
	// Now is the clock (tests shorten time by moving it).
	Now func() time.Time
	Log *slog.Logger
}

// Edge is the instance-traffic handler.
type Edge struct {
	cfg       Config
	st        *store.Store
	instances *instance.Service
	rt        runtime.Driver
	signer    *Signer
	act       *Activity
	log       *slog.Logger

	rows  *ttlCache[store.Instance]
	hosts *ttlCache[store.PublicPort]
	keys  *ttlCache[store.Workspace]
	addrs *ttlCache[runtime.Status]

	proxy *httputil.ReverseProxy
	tr    *http.Transport
}

// New returns the edge. act records traffic; the same record goes to the
// instance service's exec hook and to the idle watcher.
func New(cfg Config, st *store.Store, instances *instance.Service, rt runtime.Driver, signer *Signer, act *Activity) *Edge {
	if cfg.WakeTimeout == 0 {
		cfg.WakeTimeout = 3 * time.Minute
	}
	if cfg.CacheTTL == 0 {
		cfg.CacheTTL = time.Second
	}
	if cfg.KeyTTL == 0 {
		cfg.KeyTTL = 10 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	e := &Edge{cfg: cfg, st: st, instances: instances, rt: rt, signer: signer, act: act, log: cfg.Log}
	e.rows = newCache[store.Instance](cfg.CacheTTL, 100_000, cfg.Now)
	e.hosts = newCache[store.PublicPort](cfg.CacheTTL, 100_000, cfg.Now)
	e.keys = newCache[store.Workspace](cfg.KeyTTL, 10_000, cfg.Now)
	// Container addresses change only when a container is recreated; a
	// failed dial forgets them at once.
	e.addrs = newCache[runtime.Status](time.Minute, 100_000, cfg.Now)
	e.tr, e.proxy = e.newProxy()
	return e
}

// Close drops idle connections to containers.
func (e *Edge) Close() { e.tr.CloseIdleConnections() }

// target is one request's destination, decided before it is forwarded.
type target struct {
	in     store.Instance
	port   int
	public bool
	// gateway is set on requests the edge authenticated (key or signed
	// URL): they carry X-Svc-Gateway-Token, public ones never do.
	gateway string
}

// ServeHTTP serves a request whose Host is under the apps domain.
func (e *Edge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := e.serve(w, r); err != nil {
		var ee *Error
		if !errors.As(err, &ee) {
			if r.Context().Err() != nil {
				return // the client left
			}
			e.log.Error("edge", "host", r.Host, "path", r.URL.Path, "err", err)
			ee = &Error{Status: http.StatusInternalServerError, Code: "internal_error"}
		}
		writeError(w, ee)
	}
}

func (e *Edge) serve(w http.ResponseWriter, r *http.Request) error {
	route, ok := e.cfg.Names.Parse(r.Host)
	if !ok || route.Kind == hostname.Unknown {
		return errNotFound
	}
	if r.URL.Path == "/health" {
		return e.health(w, r, route)
	}
	var t target
	var err error
	if route.Kind == hostname.Public {
		t, err = e.publicTarget(r.Context(), route)
	} else {
		var done bool
		t, done, err = e.instanceTarget(w, r, route)
		if done {
			return nil
		}
	}
	if err != nil {
		return err
	}
	if err := e.admit(t); err != nil {
		return err
	}
	if !awake(t.in) {
		// Asleep, waking, starting, or its checkpoint being written: hold
		// the request (no pooled connection may reach a container that is
		// going to sleep) until the instance runs and the port accepts.
		hi := holdInfo{req: r.Context(), public: t.public}
		if err := e.await(hi, t.in.ID, t.port, e.act.mark(t.in.ID)); err != nil {
			return err
		}
	}
	e.forward(w, r, t)
	return nil
}

// Forget drops what the edge caches of an instance; the instance service
// calls it when an instance starts to sleep, so the edge holds requests at
// once instead of after its cache expires.
func (e *Edge) Forget(id string) {
	e.rows.forget(id)
	e.addrs.forget(id)
}

// health answers /health of every instance and public host itself: the
// edge is up and the instance exists; it needs no credential, never wakes
// the instance and never reaches the application.
func (e *Edge) health(w http.ResponseWriter, r *http.Request, route hostname.Route) error {
	id := route.ID
	if route.Kind == hostname.Public {
		p, err := e.publicPort(r.Context(), route.Label)
		if err != nil {
			return err
		}
		id = p.InstanceID
	}
	in, err := e.row(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "status": in.Status})
	return nil
}

// admit refuses requests the instance's state cannot take. Sleeping and
// waking instances are admitted: the connection to the container waits
// for the wake (see dial).
func (e *Edge) admit(t target) error {
	in := t.in
	switch {
	case in.PastDue && t.public:
		return unavailable("")
	case in.PastDue:
		return errSuspended
	case in.Status == instance.Stopped || in.Status == instance.Failed:
		if t.public {
			return unavailable("")
		}
		return unavailable("the instance is " + in.Status + "; start it with POST /v1/instances/" + in.ID + "/start")
	}
	return nil
}

// row reads an instance through the cache; deleted and unknown ids are
// not_found.
func (e *Edge) row(ctx context.Context, id string) (store.Instance, error) {
	return e.rows.get(id, func() (store.Instance, error) { return e.fresh(ctx, id) })
}

// fresh reads an instance from the store and refreshes the cache.
func (e *Edge) fresh(ctx context.Context, id string) (store.Instance, error) {
	in, err := e.st.Instance(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		err = errNotFound
	}
	if err != nil && !errors.Is(err, errNotFound) {
		return in, err // a store failure is not cached
	}
	e.rows.put(id, in, err)
	return in, err
}

func (e *Edge) publicPort(ctx context.Context, label string) (store.PublicPort, error) {
	return e.hosts.get(label, func() (store.PublicPort, error) {
		p, err := e.st.PublicPortByHost(ctx, label)
		if errors.Is(err, store.ErrNotFound) {
			return p, errNotFound
		}
		return p, err
	})
}

func (e *Edge) publicTarget(ctx context.Context, route hostname.Route) (target, error) {
	p, err := e.publicPort(ctx, route.Label)
	if err != nil {
		return target{}, err
	}
	in, err := e.row(ctx, p.InstanceID)
	if err != nil {
		return target{}, err
	}
	return target{in: in, port: p.Port, public: true}, nil
}

// workspace reads a key's workspace through the cache.
func (e *Edge) workspace(ctx context.Context, key string) (store.Workspace, error) {
	return e.keys.get(key, func() (store.Workspace, error) {
		ws, err := auth.Lookup(ctx, e.st, key)
		if errors.Is(err, auth.ErrUnknownKey) {
			return ws, errUnauthorized
		}
		return ws, err
	})
}

// routePort is where the bare instance URL goes: the template's default
// port, or the gateway's when it has none.
func routePort(in store.Instance) int {
	if in.DefaultPort != 0 {
		return in.DefaultPort
	}
	return template.GatewayPort
}
