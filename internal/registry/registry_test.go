package registry_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/svc-dev/svc/internal/registry"
)

// Every request to our registry needs the internal credential: reads of
// what is stored, writes, and the catalog.
func TestHandlerRequiresCredential(t *testing.T) {
	ctx := context.Background()
	src := newSource(t, "", "")
	img := randomImage(t, 1, "linux", "amd64")
	ref := src.push(t, "app", "v1", img)
	reg := openRegistry(t, t.TempDir())
	host := serve(t, reg)
	got, err := reg.Import(ctx, ref, nil, "ws/w/app", "v1")
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	layer, _ := layers[0].Digest()

	paths := []struct{ method, path string }{
		{"GET", "/v2/"},
		{"GET", "/v2/_catalog"},
		{"GET", "/v2/ws/w/app/tags/list"},
		{"GET", "/v2/ws/w/app/manifests/" + got.Digest},
		{"HEAD", "/v2/ws/w/app/manifests/v1"},
		{"GET", "/v2/ws/w/app/blobs/" + layer.String()},
		{"POST", "/v2/ws/w/app/blobs/uploads/"},
		{"DELETE", "/v2/ws/w/app/manifests/" + got.Digest},
	}
	creds := []struct {
		name       string
		user, pass string
		set        bool
	}{
		{"none", "", "", false},
		{"wrong password", testUser, testPass + "x", true},
		{"wrong user", "admin", testPass, true},
		{"empty", "", "", true},
	}
	for _, p := range paths {
		for _, c := range creds {
			req, _ := http.NewRequest(p.method, "http://"+host+p.path, nil)
			if c.set {
				req.SetBasicAuth(c.user, c.pass)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s %s with %s credential: %s, want 401", p.method, p.path, c.name, resp.Status)
			}
			if resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s: 401 without a challenge", p.method, p.path)
			}
		}
	}
	// With the credential, reads work.
	for _, p := range paths[:6] {
		req, _ := http.NewRequest(p.method, "http://"+host+p.path, nil)
		req.SetBasicAuth(testUser, testPass)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s %s with the credential: %s", p.method, p.path, resp.Status)
		}
	}
	// Outside /v2 there is nothing, with or without the credential.
	req, _ := http.NewRequest("GET", "http://"+host+"/", nil)
	req.SetBasicAuth(testUser, testPass)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET / = %v, %v; want 404", resp.Status, err)
	}
}

// Pushes over HTTP (as a build pushes its result) need the credential too.
func TestPushOverHTTP(t *testing.T) {
	reg := openRegistry(t, t.TempDir())
	host := serve(t, reg)
	img := randomImage(t, 2, "linux", "amd64")
	ref := mustRef(t, host+"/ws/w/built:b1")
	if err := remote.Write(ref, img); err == nil {
		t.Fatal("anonymous push succeeded")
	}
	if err := remote.Write(ref, img, remote.WithAuth(&authn.Basic{Username: testUser, Password: "nope"})); err == nil {
		t.Fatal("push with a wrong password succeeded")
	}
	if err := remote.Write(ref, img, remote.WithAuth(&authn.Basic{Username: testUser, Password: testPass})); err != nil {
		t.Fatal(err)
	}
	d, err := reg.Resolve(context.Background(), "ws/w/built", "b1")
	if err != nil || d != digestOf(t, img) {
		t.Fatalf("Resolve = %s, %v; want %s", d, err, digestOf(t, img))
	}
	pullBack(t, host, "ws/w/built", d)
}

// What is stored survives closing the registry and opening it again.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := newSource(t, "", "")
	img := randomImage(t, 3, "linux", "amd64")
	ref := src.push(t, "app", "v1", img)

	first := openRegistry(t, dir)
	got, err := first.Import(ctx, ref, nil, "system/svc-general", "2026-11-21")
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	again := openRegistry(t, dir)
	host := serve(t, again)
	if !again.Exists(ctx, "system/svc-general", got.Digest) {
		t.Fatal("image gone after reopening")
	}
	if d, err := again.Resolve(ctx, "system/svc-general", "2026-11-21"); err != nil || d != got.Digest {
		t.Fatalf("Resolve after reopening = %s, %v", d, err)
	}
	if tags, err := again.Tags(ctx, "system/svc-general"); err != nil || !slices.Equal(tags, []string{"2026-11-21"}) {
		t.Fatalf("Tags after reopening = %v, %v", tags, err)
	}
	pullBack(t, host, "system/svc-general", got.Digest)
}

func TestNewNeedsCredential(t *testing.T) {
	for _, c := range []registry.Config{
		{Dir: t.TempDir(), Username: "u"},
		{Dir: t.TempDir(), Password: "p"},
		{Username: "u", Password: "p"},
	} {
		if reg, err := registry.New(context.Background(), c); err == nil {
			reg.Close()
			t.Errorf("New(%+v) succeeded", c)
		}
	}
}

// distribution's logs reach Config.Logger, a client's 404 only at debug level.
func TestLogsGoToConfigLogger(t *testing.T) {
	var got capture
	reg, err := registry.New(context.Background(), registry.Config{
		Dir: t.TempDir(), Username: testUser, Password: testPass, Logger: slog.New(&got),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	host := serve(t, reg)
	req, _ := http.NewRequest("GET", "http://"+host+"/v2/ws/w/none/manifests/v1", nil)
	req.SetBasicAuth(testUser, testPass)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown manifest: %s", resp.Status)
	}
	recs := got.all()
	i := slices.IndexFunc(recs, func(r slog.Record) bool {
		return r.Message == "registry: response completed with error"
	})
	if i < 0 {
		t.Fatalf("no log of the 404 among %d records", len(recs))
	}
	if recs[i].Level != slog.LevelDebug {
		t.Fatalf("a client's 404 logged at %s", recs[i].Level)
	}
}

// capture is a slog.Handler keeping every record.
type capture struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (c *capture) Enabled(context.Context, slog.Level) bool { return true }
func (c *capture) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c *capture) WithGroup(string) slog.Handler            { return c }
func (c *capture) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	c.recs = append(c.recs, r.Clone())
	c.mu.Unlock()
	return nil
}

func (c *capture) all() []slog.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.recs)
}
