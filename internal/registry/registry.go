// Package registry is svcd's private image storage: an OCI registry
// (distribution/v3 as a library, filesystem storage under the data dir) where
// template images live, pinned by digest, plus the copy-in of images from a
// source registry or a docker save / OCI layout archive.
//
// svcd serves Handler on a loopback listener and tells the registry where
// (SetAddr); dockerd pulls instance images from there by digest with the
// internal credential (PullAuth). Every request, pull or push, must carry that
// credential: the listener is reachable by other local processes and workspace
// images are private.
package registry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	// The only storage driver linked in: cloud drivers stay out of svcd.
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
)

// Config configures the registry.
type Config struct {
	// Dir holds the registry's blobs and manifests; it is created if missing.
	Dir string
	// Username and Password are the internal credential every request must
	// carry (HTTP basic auth). Both are required.
	Username string
	Password string
	// Addr is host:port where svcd serves Handler, used by PullRef. It may be
	// left empty and set later with SetAddr once the listener is bound.
	Addr string
	// Logger receives distribution's warnings and errors; nil discards them.
	Logger *slog.Logger
	// TmpDir is where archives are spooled while imported. Empty means
	// Dir/tmp, which New clears (leftovers of a crash). Another process
	// opening the same Dir next to a running svcd (svcd admin images) gives
	// its own, so neither clears the other's imports.
	TmpDir string
}

// Auth is a registry credential (HTTP basic auth). Its fields match
// runtime.Auth, so one converts to the other.
type Auth struct {
	Username string
	Password string
}

// Image is an image stored in the registry.
type Image struct {
	// Digest is the sha256 of the stored image manifest ("sha256:...").
	Digest string
	// SizeBytes is the config plus the layers as stored (compressed).
	SizeBytes int64
}

// Registry is the embedded registry. Its methods are safe for concurrent use.
type Registry struct {
	app     *handlers.App
	handler http.Handler
	cred    Auth
	tmpDir  string
	// local reaches handler in-process; see local.go. Its handler
	// goroutines can outlive a call, so Close waits for them.
	local    http.RoundTripper
	inflight *sync.WaitGroup

	mu   sync.RWMutex
	addr string
}

// New opens (or creates) the registry stored in cfg.Dir.
func New(ctx context.Context, cfg Config) (_ *Registry, err error) {
	if cfg.Dir == "" {
		return nil, errors.New("registry: Dir is required")
	}
	if cfg.Username == "" || cfg.Password == "" {
		return nil, errors.New("registry: Username and Password are required")
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	storeDir := filepath.Join(dir, "store")
	tmpDir := cfg.TmpDir
	if tmpDir == "" {
		tmpDir = filepath.Join(dir, "tmp")
		// tmp holds archives being imported; leftovers of a crash are garbage.
		if err := os.RemoveAll(tmpDir); err != nil {
			return nil, fmt.Errorf("registry: clear %s: %w", tmpDir, err)
		}
	}
	for _, d := range []string{storeDir, tmpDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("registry: %w", err)
		}
	}
	routeLogs(cfg.Logger)

	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	dc := &configuration.Configuration{
		Storage: configuration.Storage{
			"filesystem": configuration.Parameters{"rootdirectory": storeDir},
			"cache":      configuration.Parameters{"blobdescriptor": "inmemory"},
		},
	}
	// Relative upload locations work whatever address svcd serves us on, and
	// through the in-process transport.
	dc.HTTP.RelativeURLs = true
	// The secret only signs upload state between requests of one process.
	dc.HTTP.Secret = hex.EncodeToString(secret)

	// NewApp reports configuration and storage failures by panicking.
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("registry: start distribution: %v", p)
		}
	}()
	app := handlers.NewApp(ctx, dc)

	r := &Registry{
		app:    app,
		cred:   Auth{Username: cfg.Username, Password: cfg.Password},
		tmpDir: tmpDir,
		addr:   cfg.Addr,
	}
	r.handler = r.authorize(app)
	r.inflight = new(sync.WaitGroup)
	r.local = localTransport{h: r.handler, inflight: r.inflight}
	return r, nil
}

// Close waits for in-process requests to end and stops distribution's
// background work (upload purging). Nothing may be called after Close.
func (r *Registry) Close() error {
	r.inflight.Wait()
	return r.app.Shutdown()
}

// Handler serves the registry API under /v2/, requiring the internal
// credential on every request.
func (r *Registry) Handler() http.Handler { return r.handler }

// SetAddr records host:port where svcd serves Handler.
func (r *Registry) SetAddr(hostport string) {
	r.mu.Lock()
	r.addr = hostport
	r.mu.Unlock()
}

// Addr returns the address set by Config.Addr or SetAddr.
func (r *Registry) Addr() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.addr
}

// PullRef returns the reference dockerd pulls an image by: host:port/repo@digest.
func (r *Registry) PullRef(repo, digest string) string {
	return r.Addr() + "/" + repo + "@" + digest
}

// PullAuth returns the internal credential, for the engine's image pull.
func (r *Registry) PullAuth() Auth { return r.cred }
