package testimage

import (
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Image is an image pushed to a registry.
type Image struct {
	// Ref is host:port/repo@sha256:..., what a template pins.
	Ref string
	// Digest is the manifest digest, sha256:...
	Digest string
}

// StartRegistry serves a real OCI registry (in memory) on 127.0.0.1 for the
// test's lifetime and returns its host:port. Docker treats 127.0.0.0/8 as an
// insecure registry, so dockerd pulls from it over plain HTTP.
func StartRegistry(t testing.TB) string {
	t.Helper()
	hostPort, stop := ServeRegistry()
	t.Cleanup(stop)
	return hostPort
}

// ServeRegistry is StartRegistry for callers without a testing.TB.
func ServeRegistry() (hostPort string, stop func()) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	return strings.TrimPrefix(srv.URL, "http://"), srv.Close
}

// Push builds opts and pushes the image to registryHostPort/repo (tag
// latest) and returns its digest reference.
func Push(t testing.TB, registryHostPort, repo string, opts Options) Image {
	t.Helper()
	img, err := PushImage(registryHostPort, repo, opts)
	if err != nil {
		t.Fatalf("testimage: %v", err)
	}
	return img
}

// PushImage is Push for callers without a testing.TB.
func PushImage(registryHostPort, repo string, opts Options) (Image, error) {
	img, err := BuildImage(opts)
	if err != nil {
		return Image{}, fmt.Errorf("build: %w", err)
	}
	tag, err := name.NewTag(registryHostPort+"/"+repo+":latest", name.Insecure)
	if err != nil {
		return Image{}, err
	}
	if err := remote.Write(tag, img); err != nil {
		return Image{}, fmt.Errorf("push %s: %w", tag, err)
	}
	d, err := img.Digest()
	if err != nil {
		return Image{}, err
	}
	return Image{Ref: tag.Context().Digest(d.String()).String(), Digest: d.String()}, nil
}
