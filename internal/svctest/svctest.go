// Package svctest starts a real svcd in-process for end-to-end tests: a
// fresh data directory, SQLite, the embedded registry, the real dockerd.
// Tests drive it through the public SDK, as users do.
package svctest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/auth"
	"github.com/svc-dev/svc/internal/server"
	"github.com/svc-dev/svc/internal/testimage"
	"github.com/svc-dev/svc/sdk"
)

// Options tune the server under test.
type Options struct {
	// MinIdleTimeout lowers the idle_timeout_seconds floor.
	MinIdleTimeout int
	// BootTimeout bounds the boot probe (default 15s in tests).
	BootTimeout time.Duration
	// ReconcileEvery is the reconciler's period (default 1h: tests call
	// Reconcile themselves unless they set it).
	ReconcileEvery time.Duration
	// ModelUpstream, ModelAPIKey and Model configure the managed model.
	ModelUpstream, ModelAPIKey, Model string
	// Verbose sends svcd's log to the test log.
	Verbose bool
	// WakeTimeout bounds the edge's wake hold (default 3m).
	WakeTimeout time.Duration
	// IdleCheckEvery is the idle watcher's period (default 200ms in tests).
	IdleCheckEvery time.Duration
	// Failpoint is called at named points of long operations; a test can
	// block in it to hold an operation (a sleep's checkpoint) open.
	Failpoint func(name string)
	// TLSCert and TLSKey serve the API and edge over HTTPS.
	TLSCert, TLSKey string
}

// Env is a running svcd with one workspace.
type Env struct {
	T      testing.TB
	Server *server.Server
	// Client uses the first workspace's key.
	Client *sdk.Client
	// Source is a test registry (host:port) to push images to before
	// registering them as templates.
	Source  string
	DataDir string
}

// New starts svcd for the test and tears it down (deleting every instance
// it made) at the end.
func New(t testing.TB, opts Options) *Env {
	t.Helper()
	testimage.RequireDocker(t)
	if opts.BootTimeout == 0 {
		opts.BootTimeout = 15 * time.Second
	}
	if opts.ReconcileEvery == 0 {
		opts.ReconcileEvery = time.Hour
	}
	if opts.IdleCheckEvery == 0 {
		opts.IdleCheckEvery = 200 * time.Millisecond
	}
	var out io.Writer = io.Discard
	if opts.Verbose || os.Getenv("SVC_TEST_VERBOSE") != "" {
		out = testWriter{t}
	}
	dir := t.TempDir()
	srv, err := server.Start(context.Background(), server.Config{
		DataDir:        dir,
		Listen:         "127.0.0.1:0",
		RegistryListen: "127.0.0.1:0",
		AppsDomain:     "localhost",
		Network:        "svc",
		MinIdleTimeout: opts.MinIdleTimeout,
		BootTimeout:    opts.BootTimeout,
		ReconcileEvery: opts.ReconcileEvery,
		ModelUpstream:  opts.ModelUpstream,
		ModelAPIKey:    opts.ModelAPIKey,
		Model:          opts.Model,
		StopGrace:      2 * time.Second,
		WakeTimeout:    opts.WakeTimeout,
		IdleCheckEvery: opts.IdleCheckEvery,
		Failpoint:      opts.Failpoint,
		TLSCert:        opts.TLSCert,
		TLSKey:         opts.TLSKey,
		Log:            slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatalf("svctest: start svcd: %v", err)
	}
	e := &Env{T: t, Server: srv, Client: sdk.New(srv.URL, srv.Key), Source: testimage.StartRegistry(t), DataDir: dir}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		all, _ := srv.Store.AllInstances(ctx)
		for _, in := range all {
			if err := srv.Instances.Delete(ctx, in.WorkspaceID, in.ID); err != nil {
				t.Logf("svctest: delete %s: %v", in.ID, err)
			}
		}
		srv.Close()
	})
	return e
}

// NewWorkspace makes another workspace and returns a client with its key.
func (e *Env) NewWorkspace(name string) *sdk.Client {
	e.T.Helper()
	_, key, err := auth.CreateWorkspace(context.Background(), e.Server.Store, name)
	if err != nil {
		e.T.Fatal(err)
	}
	return sdk.New(e.Server.URL, key)
}

// Push builds a test image and pushes it to the source registry.
func (e *Env) Push(repo string, opts testimage.Options) testimage.Image {
	e.T.Helper()
	return testimage.Push(e.T, e.Source, repo, opts)
}

// Template pushes a test image and registers it as a workspace template
// of the first workspace.
func (e *Env) Template(name string, opts testimage.Options, defaultPort int) sdk.Template {
	e.T.Helper()
	img := e.Push("test/"+name, opts)
	req := sdk.CreateTemplate{Name: name, ImageRef: img.Ref}
	if defaultPort != 0 {
		req.DefaultPort = &defaultPort
	}
	t, err := e.Client.CreateTemplate(context.Background(), req)
	if err != nil {
		e.T.Fatalf("svctest: register template %s: %v", name, err)
	}
	return t
}

// Sleeper is an image whose main process sleeps forever.
func Sleeper() testimage.Options {
	return testimage.Options{Cmd: []string{"/bin/sleep", "2147483647"}}
}

// HTTPServer is an image serving /www over HTTP on port with busybox
// httpd, with index.html saying hello.
func HTTPServer(port int) testimage.Options {
	return testimage.Options{
		Files: []testimage.File{{Path: "/www/index.html", Content: []byte("hello from svc\n")}},
		Cmd:   []string{"/bin/httpd", "-f", "-p", fmt.Sprint(port), "-h", "/www"},
	}
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// WebApp is an image running the edge's test application on ports (the
// first is the one to give as the template's default port): plain HTTP,
// /sse, /ws, /upload, /download, /headers; "boot" in the console at start.
func WebApp(ports ...int) testimage.Options {
	list := make([]string, len(ports))
	for i, p := range ports {
		list[i] = fmt.Sprint(p)
	}
	return testimage.Options{
		Programs: []testimage.Program{{Package: "github.com/svc-dev/svc/internal/testimage/webapp", Path: "/app"}},
		Cmd:      []string{"/app", "-ports", strings.Join(list, ",")},
	}
}

// Gateway is an image running the real svc-gateway (compiled from this
// module) on 3737 as its main process, with general-a as its agent; the
// instance reaches the managed model through svcd.
func Gateway() testimage.Options {
	return testimage.Options{
		Programs: []testimage.Program{{Package: "github.com/svc-dev/svc/cmd/svc-gateway", Path: "/usr/local/bin/svc-gateway"}},
		Env:      []string{"HOME=/root"},
		Cmd:      []string{"/usr/local/bin/svc-gateway"},
	}
}
