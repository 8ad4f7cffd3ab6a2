// Package sysimage builds the system template images from images/ with the
// Docker engine and publishes them as dated releases: each image is saved
// from the engine, stored in the data directory's registry and recorded
// with store.PublishRelease, so the system catalog resolves to it.
//
// The order is fixed: the Debian root (pulled, or made with debootstrap
// where no registry answers), then base, then each template on base. The
// engine's layer cache makes a rebuild with no change cost seconds and
// return the same image, which publishes nothing.
package sysimage

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/template"
)

// Base names the shared base image; it is built, never published.
const Base = "base"

// Names lists the system templates in catalog order.
func Names() []string {
	out := make([]string, len(template.Catalog))
	for i, s := range template.Catalog {
		out[i] = s.Name
	}
	return out
}

// EngineRepo is the engine's repository of an image: svc/<name>. A
// published release is also tagged there as svc/<name>:<tag>, its public
// image_ref.
func EngineRepo(name string) string { return "svc/" + name }

// Builder builds images with an engine. Its methods may be called from
// several goroutines and processes at once: builds are serialised per host
// by a lock in CacheDir.
type Builder struct {
	Docker *client.Client
	// Gateway is the static svc-gateway binary copied into every image of
	// a template with a gateway.
	Gateway string
	// CacheDir keeps the Debian root tarball and the host-wide locks
	// (default: DefaultCacheDir()).
	CacheDir string
	// Mirror is the Debian mirror debootstrap uses (default: its own).
	Mirror string
	// Labels are set on every template image. A change of labels is a
	// change of image: tests use it to force a new release.
	Labels map[string]string
	// Progress receives one line per step of each build; nil discards.
	Progress io.Writer
	// Verbose sends every line of build output to Progress.
	Verbose bool
	// NoCache builds every step again instead of using the engine's cache
	// (the bench's cold builds).
	NoCache bool

	mu sync.Mutex // serialises progress lines

	baseMu       sync.Mutex
	built        *Built // base, as last built by this Builder
	builtNoCache bool
}

// Built is an image the engine holds after a build.
type Built struct {
	Name string
	// ID is the engine's image ID (the sha256 of its config).
	ID string
	// Size is the engine's size of the image, all layers unpacked.
	Size int64
	// Cached reports that every step came from the engine's cache.
	Cached bool
	// Took is how long the build took.
	Took time.Duration
}

// DefaultCacheDir is $SVC_IMAGE_CACHE, else svc/images under the user's
// cache directory (~/.cache, so root's is shared by every checkout).
func DefaultCacheDir() string {
	if d := os.Getenv("SVC_IMAGE_CACHE"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "svc", "images")
}

func (b *Builder) cacheDir() string {
	if b.CacheDir == "" {
		b.CacheDir = DefaultCacheDir()
	}
	return b.CacheDir
}

func (b *Builder) logf(format string, args ...any) {
	if b.Progress == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	fmt.Fprintf(b.Progress, format+"\n", args...)
}

// imageID returns the engine's ID of ref (a cerrdefs not-found error when
// it has none).
func (b *Builder) imageID(ctx context.Context, ref string) (string, error) {
	res, err := b.Docker.ImageInspect(ctx, ref)
	if err != nil {
		return "", err
	}
	return res.ID, nil
}
