package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/svc-dev/svc/internal/fault"
	"github.com/svc-dev/svc/internal/registry"
)

const (
	testUser = "svcd"
	testPass = "internal-5c2f9e1b7a"
)

// openRegistry opens our registry on dir and closes it with the test.
func openRegistry(t *testing.T, dir string) *registry.Registry {
	t.Helper()
	reg, err := registry.New(context.Background(), registry.Config{
		Dir:      dir,
		Username: testUser,
		Password: testPass,
		Logger:   slog.New(failOnError{t, slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})}),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	return reg
}

// failOnError fails the test on any error distribution logs: the tests
// break nothing on our side, so one means a bug (such as a request racing
// the bookkeeping of the one before it).
type failOnError struct {
	t *testing.T
	slog.Handler
}

func (h failOnError) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		h.t.Errorf("registry logged an error: %s", r.Message)
	}
	return h.Handler.Handle(ctx, r)
}

// serve serves reg's handler on 127.0.0.1 and returns its host:port.
func serve(t *testing.T, reg *registry.Registry) string {
	t.Helper()
	srv := httptest.NewServer(reg.Handler())
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	reg.SetAddr(host)
	return host
}

// source is a source registry (ggcr's in-memory registry) on 127.0.0.1,
// optionally behind basic auth, counting the blob requests it gets.
type source struct {
	host     string
	user     string
	pass     string
	blobReqs atomic.Int64
	// stall, when set, is closed once a blob download has started and then
	// holds that download until the client goes away.
	stall chan struct{}
	// breakOff cuts every blob download off halfway; corrupt flips its bytes.
	breakOff, corrupt bool
}

func newSource(t *testing.T, user, pass string) *source {
	t.Helper()
	s := &source{user: user, pass: pass}
	inner := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.user != "" {
			u, p, ok := r.BasicAuth()
			if !ok || u != s.user || p != s.pass {
				// Echo the credential back, as a careless registry might:
				// Import must not pass it on.
				w.Header().Set("WWW-Authenticate", `Basic realm="source"`)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				msg, _ := json.Marshal("bad credentials: " + r.Header.Get("Authorization") + " user " + u + " password " + p)
				fmt.Fprintf(w, `{"errors":[{"code":"UNAUTHORIZED","message":%s}]}`, msg)
				return
			}
		}
		if strings.Contains(r.URL.Path, "/blobs/") {
			s.blobReqs.Add(1)
			if r.Method == http.MethodGet {
				switch {
				case s.stall != nil:
					w = &stallWriter{ResponseWriter: w, started: s.stall, ctx: r.Context()}
				case s.breakOff:
					w = &brokenWriter{ResponseWriter: w}
				case s.corrupt:
					w = &brokenWriter{ResponseWriter: w, corrupt: true}
				}
			}
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.host = strings.TrimPrefix(srv.URL, "http://")
	return s
}

func (s *source) auth() authn.Authenticator {
	if s.user == "" {
		return authn.Anonymous
	}
	return &authn.Basic{Username: s.user, Password: s.pass}
}

// push writes img to repo:tag and returns the reference.
func (s *source) push(t *testing.T, repo, tag string, img v1.Image) string {
	t.Helper()
	ref := s.host + "/" + repo + ":" + tag
	if err := remote.Write(mustRef(t, ref), img, remote.WithAuth(s.auth())); err != nil {
		t.Fatal(err)
	}
	return ref
}

// pushIndex writes idx to repo:tag and returns the reference.
func (s *source) pushIndex(t *testing.T, repo, tag string, idx v1.ImageIndex) string {
	t.Helper()
	ref := s.host + "/" + repo + ":" + tag
	if err := remote.WriteIndex(mustRef(t, ref), idx, remote.WithAuth(s.auth())); err != nil {
		t.Fatal(err)
	}
	return ref
}

// putManifest writes raw manifest bytes without any of the blobs they name.
func (s *source) putManifest(t *testing.T, repo, tag, mediaType string, body []byte) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, "http://"+s.host+"/v2/"+repo+"/manifests/"+tag, bytes.NewReader(body))
	req.Header.Set("Content-Type", mediaType)
	if s.user != "" {
		req.SetBasicAuth(s.user, s.pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("put manifest: %s", resp.Status)
	}
	return s.host + "/" + repo + ":" + tag
}

// putBlob uploads one blob in a single request.
func (s *source) putBlob(t *testing.T, repo string, data []byte) v1.Hash {
	t.Helper()
	h, _, _ := v1.SHA256(bytes.NewReader(data))
	req, _ := http.NewRequest(http.MethodPost, "http://"+s.host+"/v2/"+repo+"/blobs/uploads/?digest="+h.String(), bytes.NewReader(data))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("put blob: %s", resp.Status)
	}
	return h
}

// stallWriter sends half of a blob, then holds the response until the
// client is gone.
type stallWriter struct {
	http.ResponseWriter
	started chan struct{}
	ctx     context.Context
	once    atomic.Bool
}

func (w *stallWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p[:len(p)/2])
	if err != nil {
		return n, err
	}
	w.ResponseWriter.(http.Flusher).Flush()
	if w.once.CompareAndSwap(false, true) {
		close(w.started)
	}
	<-w.ctx.Done()
	return n, w.ctx.Err()
}

// brokenWriter sends half of a layer and stops, or sends it all corrupted.
// Small blobs (the config) pass, so the failure comes mid-copy.
type brokenWriter struct {
	http.ResponseWriter
	corrupt bool
}

func (w *brokenWriter) Write(p []byte) (int, error) {
	if len(p) < 2048 {
		return w.ResponseWriter.Write(p)
	}
	if w.corrupt {
		q := bytes.Clone(p)
		for i := range q {
			q[i] ^= 0xff
		}
		return w.ResponseWriter.Write(q)
	}
	n, err := w.ResponseWriter.Write(p[:len(p)/2])
	if err != nil {
		return n, err
	}
	return n, errors.New("source broke off")
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	ref, err := name.ParseReference(s)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// randomImage is a random image of n small layers on the given platform.
func randomImage(t *testing.T, n int64, os, arch string) v1.Image {
	t.Helper()
	img, err := random.Image(2048, n)
	if err != nil {
		t.Fatal(err)
	}
	return withPlatform(t, img, os, arch)
}

// withPlatform sets the platform in img's config.
func withPlatform(t *testing.T, img v1.Image, os, arch string) v1.Image {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = os, arch
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func digestOf(t *testing.T, img v1.Image) string {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// storedSize is config plus layers as the manifest records them.
func storedSize(t *testing.T, img v1.Image) int64 {
	t.Helper()
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	n := m.Config.Size
	for _, l := range m.Layers {
		n += l.Size
	}
	return n
}

// pullBack reads repo@digest from our registry over HTTP with the internal
// credential and checks every blob against its digest.
func pullBack(t *testing.T, host, repo, digest string) v1.Image {
	t.Helper()
	img, err := remote.Image(mustRef(t, host+"/"+repo+"@"+digest),
		remote.WithAuth(&authn.Basic{Username: testUser, Password: testPass}))
	if err != nil {
		t.Fatalf("pull %s@%s: %v", repo, digest, err)
	}
	if err := validate.Image(img); err != nil {
		t.Fatalf("stored image %s@%s is not valid: %v", repo, digest, err)
	}
	return img
}

// wantFault fails unless err carries code; it returns the fault.
func wantFault(t *testing.T, err error, code fault.Code) *fault.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	fe, ok := fault.As(err)
	if !ok || fe.Code != code {
		t.Fatalf("got %v, want %s", err, code)
	}
	return fe
}

// closedPort returns a 127.0.0.1 address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
