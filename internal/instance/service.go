// Package instance is the instance state machine: the only code that moves
// an instance between states. Every move is written to the store before
// the runtime is touched (status plus the operation in flight), so after a
// crash Reconcile can finish what was started; ownership of an instance is
// the op column, taken with a compare-and-set in one transaction, so
// concurrent calls get 409 try_again instead of racing.
package instance

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-dev/svc/internal/fault"
	"github.com/svc-dev/svc/internal/hostname"
	"github.com/svc-dev/svc/internal/runtime"
	"github.com/svc-dev/svc/internal/store"
	"github.com/svc-dev/svc/internal/template"
)

// Statuses an instance reports.
const (
	Running  = "running"
	Stopped  = "stopped"
	Sleeping = "sleeping"
	Waking   = "waking"
	Starting = "starting"
	Updating = "updating"
	Failed   = "failed"
)

// Operations in flight (store.Instance.Op).
const (
	OpCreate  = "create"
	OpStart   = "start"
	OpStop    = "stop"
	OpRestart = "restart"
	OpDelete  = "delete"
	OpSleep   = "sleep" // the checkpoint is being written
	OpWake    = "wake"
	OpCorrect = "reconcile" // the reconciler stops a container that should not run
)

// Config tunes the service.
type Config struct {
	Names hostname.Namer
	// Pull returns the reference and credential the runtime pulls an image
	// from private storage with.
	Pull func(repo, digest string) (ref string, auth *runtime.Auth)
	// Env returns platform variables added to every start of in (the model
	// endpoint, ...); the service adds the SVC_ identity variables itself.
	Env func(in store.Instance) map[string]string
	// StopGrace is how long a stop waits before killing (default 10s).
	StopGrace time.Duration
	// BootTimeout bounds the wait for a default port to open (default 2m).
	BootTimeout time.Duration
	// MinIdleTimeout is the floor of idle_timeout_seconds (default 300);
	// operators lower it for tests only.
	MinIdleTimeout int
	// HostPaths are redacted from console output shown to clients.
	HostPaths []string
	// HostCPUs is the number of cores for dedicated (performance) instances.
	HostCPUs int
	// Failpoint, when set, is called at named points of long operations;
	// crash tests make it kill the process there.
	Failpoint func(name string)
	Log       *slog.Logger
}

// Service runs the instance state machine.
type Service struct {
	st   *store.Store
	tpl  *template.Service
	rt   runtime.Driver
	cfg  Config
	log  *slog.Logger
	hook Hooks
	// cp is the runtime's checkpointing when this host supports it.
	cp runtime.Checkpointer

	wakeMu    sync.Mutex
	wakes     map[string]*wakeCall
	wakeCount atomic.Int64
}

// Hooks let other parts of svcd observe instances without owning them.
type Hooks struct {
	// Activity is called on exec, which keeps an auto-sleep instance awake.
	Activity func(id string)
	// Asleep is called when an instance's status turns sleeping, before
	// its checkpoint is written (the edge stops forwarding to it).
	Asleep func(id string)
}

// New returns the service.
func New(st *store.Store, tpl *template.Service, rt runtime.Driver, cfg Config) *Service {
	if cfg.StopGrace == 0 {
		cfg.StopGrace = 10 * time.Second
	}
	if cfg.BootTimeout == 0 {
		cfg.BootTimeout = 2 * time.Minute
	}
	if cfg.MinIdleTimeout == 0 {
		cfg.MinIdleTimeout = 300
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Env == nil {
		cfg.Env = func(store.Instance) map[string]string { return nil }
	}
	s := &Service{st: st, tpl: tpl, rt: rt, cfg: cfg, log: cfg.Log, wakes: map[string]*wakeCall{}}
	s.cp = checkpointer(rt, s)
	return s
}

// SetHooks installs observers; call before serving.
func (s *Service) SetHooks(h Hooks) { s.hook = h }

// errNotFound is the one answer for unknown, deleted and foreign ids.
func errNotFound() error { return fault.NotFoundf("instance not found") }

// Get reads an instance of workspace ws.
func (s *Service) Get(ctx context.Context, ws, id string) (store.Instance, error) {
	in, err := s.st.Instance(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && in.WorkspaceID != ws {
		return store.Instance{}, errNotFound()
	}
	return in, err
}

// List returns a workspace's instances, newest first, with their ports.
func (s *Service) List(ctx context.Context, ws string) ([]store.Instance, map[string][]store.PublicPort, error) {
	list, err := s.st.Instances(ctx, ws)
	if err != nil {
		return nil, nil, err
	}
	ports, err := s.st.PublicPortsOf(ctx, ws)
	return list, ports, err
}

// mutate applies fn to an instance of ws under the row lock. A foreign or
// unknown id is not_found; fn's errors pass through.
func (s *Service) mutate(ctx context.Context, ws, id string, fn func(in *store.Instance) error) (store.Instance, error) {
	in, err := s.st.MutateInstance(ctx, id, func(in *store.Instance) error {
		if ws != "" && in.WorkspaceID != ws {
			return errNotFound()
		}
		return fn(in)
	})
	if errors.Is(err, store.ErrNotFound) {
		return in, errNotFound()
	}
	return in, err
}

// busy is the answer while another operation owns the instance.
func busy(in *store.Instance) error {
	return fault.New(fault.TryAgain, "instance %s is busy (%s in progress); retry with backoff", in.ID, in.Op)
}

// reason builds a status_reason stamped now.
func (s *Service) reason(code, op, msg, detail string) *store.Reason {
	return &store.Reason{Code: code, Message: msg, Detail: detail, Operation: op, At: s.st.Now()}
}
