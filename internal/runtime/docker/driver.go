// Package docker is the runtime driver for one Docker Engine host. Each
// instance is one container labelled with its install and instance id, on a
// shared bridge network with inter-container traffic off, and one sparse
// ext4 image loop-mounted on the host whose home/ and root/ are bind-mounted
// at /home and /root. svcd must run on the Docker host itself (not in a
// container without shared mounts): the disk is mounted by svcd and bound
// into containers by dockerd, so both need the same mount namespace.
package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/runtime"
	"github.com/svc-dev/svc/internal/runtime/docker/disk"
)

// Labels every container of an install carries; List and the reconciler
// only ever look at containers with their own install label, because
// several installs (parallel tests, staging next to production) can share
// one dockerd.
const (
	LabelInstall  = "svc.install"
	LabelInstance = "svc.instance"
	// LabelRole marks helper containers (the short-lived seed container)
	// apart from the instance container.
	LabelRole = "svc.role"
)

// DefaultNetwork is the bridge network instances join when Config.Network
// is empty.
const DefaultNetwork = "svc"

// Config configures a Driver.
type Config struct {
	// DataDir holds disk images (DataDir/disks/<id>.img) and their mount
	// points (DataDir/mnt/<id>). It must be on the Docker host.
	DataDir string
	// Install names this install; container names and labels carry it.
	Install string
	// Network is the bridge network shared by installs; created with
	// inter-container communication off when missing, never removed.
	Network string
	// Host is the daemon address; empty means DOCKER_HOST or the default
	// socket.
	Host string
}

// Driver implements runtime.Driver on Docker Engine.
type Driver struct {
	c         *client.Client
	cfg       Config
	networkID string
	// init is true when the engine ships docker-init, so containers get it
	// as PID 1 to reap zombies that agent tools leave behind.
	init bool
	// ncpu is the host's CPU count; CPU limits are clamped to it.
	ncpu int
	// cpErr is why this host cannot checkpoint (nil when it can).
	cpErr error

	locks keyedMutex
	disks *disk.Templates
	cpu   cpuSamples
}

var _ runtime.Driver = (*Driver)(nil)

var (
	installRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,39}$`)
	idRE      = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$`)
)

// New connects to dockerd, learns what the engine offers and makes sure the
// instance network exists.
func New(ctx context.Context, cfg Config) (*Driver, error) {
	if !installRE.MatchString(cfg.Install) {
		return nil, fmt.Errorf("docker: install %q: want 1-40 letters, digits, '.', '_' or '-'", cfg.Install)
	}
	if cfg.DataDir == "" {
		return nil, errors.New("docker: DataDir is required")
	}
	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	cfg.DataDir = dataDir
	if cfg.Network == "" {
		cfg.Network = DefaultNetwork
	}
	for _, dir := range []string{diskDir(cfg.DataDir), mountDir(cfg.DataDir)} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("docker: %w", err)
		}
	}
	// The kernel names a loop device's backing file by its real path;
	// Remove matches on it.
	if cfg.DataDir, err = filepath.EvalSymlinks(cfg.DataDir); err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	opts := []client.Opt{client.FromEnv}
	if cfg.Host != "" {
		opts = append(opts, client.WithHost(cfg.Host))
	}
	c, err := client.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("docker: client: %w", err)
	}
	d := &Driver{c: c, cfg: cfg, disks: &disk.Templates{Dir: diskDir(cfg.DataDir)}}
	if err := d.probe(ctx); err != nil {
		c.Close()
		return nil, err
	}
	if d.networkID, err = d.ensureNetwork(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return d, nil
}

// probe reads the host's CPU count, whether docker-init is available and
// whether containers can be checkpointed.
func (d *Driver) probe(ctx context.Context) error {
	info, err := d.c.Info(ctx, client.InfoOptions{})
	if err != nil {
		return fmt.Errorf("docker: info: %w", err)
	}
	d.ncpu = info.Info.NCPU
	d.cpErr = d.checkpointSupport(ctx, info.Info.ExperimentalBuild)
	v, err := d.c.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return fmt.Errorf("docker: version: %w", err)
	}
	for _, comp := range v.Components {
		if comp.Name == "docker-init" {
			d.init = true
		}
	}
	return nil
}

// Install is the install this driver acts for.
func (d *Driver) Install() string { return d.cfg.Install }

// Close releases the daemon connection.
func (d *Driver) Close() error { return d.c.Close() }

// name is the container name: the install is part of it so installs sharing
// a daemon never collide.
func (d *Driver) name(id string) string { return "svc-" + d.cfg.Install + "-" + id }

// seedName is the short-lived container the image's home is copied from.
func (d *Driver) seedName(id string) string { return d.name(id) + "-seed" }

func (d *Driver) labels(id, role string) map[string]string {
	l := map[string]string{LabelInstall: d.cfg.Install, LabelInstance: id}
	if role != "" {
		l[LabelRole] = role
	}
	return l
}

func checkID(id string) error {
	if !idRE.MatchString(id) {
		return fmt.Errorf("docker: invalid instance id %q", id)
	}
	return nil
}

// missing wraps a daemon "not found" as runtime.ErrNoContainer.
func missing(err error, verb, id string) error {
	if cerrdefs.IsNotFound(err) {
		return fmt.Errorf("docker: %s %s: %w", verb, id, runtime.ErrNoContainer)
	}
	return fmt.Errorf("docker: %s %s: %w", verb, id, err)
}

// keyedMutex serialises operations on one instance id within this process; the state machine already serialises per instance,
// this guards the disk against overlapping calls all the same.
type keyedMutex struct {
	mu sync.Mutex
	m  map[string]*keyedEntry
}

type keyedEntry struct {
	mu   sync.Mutex
	refs int
}

func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]*keyedEntry{}
	}
	e := k.m[key]
	if e == nil {
		e = &keyedEntry{}
		k.m[key] = e
	}
	e.refs++
	k.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		k.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
}

// errorf prefixes driver errors so logs say where they came from.
func errorf(format string, args ...any) error {
	return fmt.Errorf("docker: "+format, args...)
}
