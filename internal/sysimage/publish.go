package sysimage

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/registry"
	"github.com/svc-dev/svc/internal/store"
	"github.com/svc-dev/svc/internal/template"
)

// Publisher publishes built images into one data directory: the image goes
// into its registry (repository system/<name>) and a dated release into its
// store. Store and registry may be the running svcd's or opened next to it
// on the same directory: SQLite serialises the writes and registry blobs are
// content-addressed.
type Publisher struct {
	Docker   *client.Client
	Store    *store.Store
	Registry *registry.Registry
	// Now dates the release tags (default time.Now; tags use UTC days).
	Now func() time.Time
	// Logf receives progress lines; nil discards.
	Logf func(format string, args ...any)
}

// Published is the outcome of publishing one image.
type Published struct {
	Release store.Release
	// New reports a release made by this call; false means the latest
	// release already holds this image and nothing was published.
	New bool
	// Stored is the image's size in the registry (config and compressed
	// layers) when New.
	Stored int64
	// Took is how long saving and storing the image took, when New.
	Took time.Duration
}

// Publish makes img the newest release of its template unless it already
// is. A new release gets today's tag, or today's tag with .2, .3 ... when
// a release of the day exists; tags are never reused.
func (p *Publisher) Publish(ctx context.Context, img Built) (Published, error) {
	if _, ok := template.SystemByName(img.Name); !ok {
		return Published{}, fmt.Errorf("publish: %q is not a system template", img.Name)
	}
	latest, err := p.Store.LatestRelease(ctx, img.Name)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return Published{}, err
	default:
		// The release's config digest is the image ID the engine gave it:
		// equal means the same image, so there is nothing to publish.
		cfg, err := p.Registry.ConfigDigest(ctx, latest.Repo, latest.ImageDigest)
		if err == nil && cfg == img.ID {
			p.logf("%s: unchanged, latest release is %s", img.Name, latest.Tag)
			return Published{Release: latest}, nil
		}
	}

	start := time.Now()
	repo := template.SystemRepo(img.Name)
	stored, err := p.store(ctx, img, repo)
	if err != nil {
		return Published{}, err
	}
	if latest.ImageDigest == stored.Digest {
		return Published{Release: latest}, nil
	}
	day := p.now().UTC().Format("2006-01-02")
	for n := 1; ; n++ {
		tag := day
		if n > 1 {
			tag += "." + strconv.Itoa(n)
		}
		rel := store.Release{Name: img.Name, Tag: tag, ImageRef: EngineRepo(img.Name) + ":" + tag, ImageDigest: stored.Digest, Repo: repo}
		err := p.Store.PublishRelease(ctx, rel)
		if errors.Is(err, store.ErrConflict) {
			continue // taken: by an earlier release, or another publisher just now
		}
		if err != nil {
			return Published{}, err
		}
		// The engine gets the public name too, so `docker run` of an
		// image_ref works on this host.
		if _, err := p.Docker.ImageTag(ctx, client.ImageTagOptions{Source: img.ID, Target: rel.ImageRef}); err != nil {
			p.logf("%s: tag %s in the engine: %v", img.Name, rel.ImageRef, err)
		}
		if rel, err = p.Store.ReleaseByTag(ctx, img.Name, tag); err != nil {
			return Published{}, err
		}
		p.logf("%s: published %s (%s, %s stored) in %s", img.Name, rel.ImageRef, short(stored.Digest),
			megabytes(stored.SizeBytes), time.Since(start).Round(100*time.Millisecond))
		return Published{Release: rel, New: true, Stored: stored.SizeBytes, Took: time.Since(start)}, nil
	}
}

// store copies the image from the engine into the registry, untagged: the
// store's release is what names it, by digest.
func (p *Publisher) store(ctx context.Context, img Built, repo string) (registry.Image, error) {
	p.logf("%s: saving %s from the engine into the registry", img.Name, short(img.ID))
	rd, err := p.Docker.ImageSave(ctx, []string{img.ID})
	if err != nil {
		return registry.Image{}, fmt.Errorf("publish %s: save: %w", img.Name, err)
	}
	defer rd.Close()
	stored, err := p.Registry.ImportArchive(ctx, rd, repo, "")
	if err != nil {
		return registry.Image{}, fmt.Errorf("publish %s: %w", img.Name, err)
	}
	return stored, nil
}

func (p *Publisher) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Publisher) logf(format string, args ...any) {
	if p.Logf != nil {
		p.Logf(format, args...)
	}
}
