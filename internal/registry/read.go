package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/svc-dev/svc/internal/fault"
)

// Tags lists repo's tags, sorted; an unknown repository has none.
func (r *Registry) Tags(ctx context.Context, repo string) ([]string, error) {
	if err := ValidRepo(repo); err != nil {
		return nil, err
	}
	lr, err := r.localRepo(repo)
	if err != nil {
		return nil, err
	}
	tags, err := remote.List(lr, r.localOptions(ctx)...)
	if err != nil {
		if isNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("registry: tags of %s: %w", repo, err)
	}
	sort.Strings(tags)
	return tags, nil
}

// Resolve returns the digest repo:tag points at; an unknown tag is a
// fault.NotFound.
func (r *Registry) Resolve(ctx context.Context, repo, tag string) (string, error) {
	if err := ValidRepo(repo); err != nil {
		return "", err
	}
	if err := validTag(tag); err != nil {
		return "", err
	}
	lr, err := r.localRepo(repo)
	if err != nil {
		return "", err
	}
	desc, err := remote.Head(lr.Tag(tag), r.localOptions(ctx)...)
	if err != nil {
		if isNotFound(err) {
			return "", fault.NotFoundf("image %s:%s not found", repo, tag)
		}
		return "", fmt.Errorf("registry: resolve %s:%s: %w", repo, tag, err)
	}
	return desc.Digest.String(), nil
}

// Exists reports whether repo holds the manifest digest. A failure to ask is
// reported as false: the caller re-imports, which is always safe.
func (r *Registry) Exists(ctx context.Context, repo, digest string) bool {
	if ValidRepo(repo) != nil || validDigest(digest) != nil {
		return false
	}
	lr, err := r.localRepo(repo)
	if err != nil {
		return false
	}
	_, err = remote.Head(lr.Digest(digest), r.localOptions(ctx)...)
	return err == nil
}

func isNotFound(err error) bool {
	var terr *transport.Error
	return errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound
}

// ConfigDigest returns the config digest of the image manifest repo@digest:
// the image ID an engine gives the image. svcd's image builder compares it
// with a fresh build to publish only images that changed.
func (r *Registry) ConfigDigest(ctx context.Context, repo, digest string) (string, error) {
	if err := ValidRepo(repo); err != nil {
		return "", err
	}
	if err := validDigest(digest); err != nil {
		return "", err
	}
	lr, err := r.localRepo(repo)
	if err != nil {
		return "", err
	}
	img, err := remote.Image(lr.Digest(digest), r.localOptions(ctx)...)
	if err != nil {
		if isNotFound(err) {
			return "", fault.NotFoundf("image %s@%s not found", repo, digest)
		}
		return "", fmt.Errorf("registry: read %s@%s: %w", repo, digest, err)
	}
	cfg, err := img.ConfigName()
	if err != nil {
		return "", fmt.Errorf("registry: config of %s@%s: %w", repo, digest, err)
	}
	return cfg.String(), nil
}
