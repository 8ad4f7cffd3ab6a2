package docker

import (
	"context"
	"fmt"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/distribution/reference"
	"github.com/moby/moby/api/pkg/authconfig"
	"github.com/moby/moby/api/types/registry"
	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/runtime"
)

// ensureImage pulls ref unless the engine already has it. Refs are pinned by
// digest, so a local hit is exactly the wanted image and never goes stale.
// It returns the image's overlay2 layer directories, top first, when they
// are readable here (see seed).
func (d *Driver) ensureImage(ctx context.Context, ref string, auth *runtime.Auth) ([]string, error) {
	res, err := d.c.ImageInspect(ctx, ref)
	if err == nil {
		return overlayLayers(res.GraphDriver), nil
	}
	if !cerrdefs.IsNotFound(err) {
		return nil, fmt.Errorf("docker: inspect image %s: %w", ref, err)
	}
	if err := d.pull(ctx, ref, auth); err != nil {
		return nil, err
	}
	if res, err = d.c.ImageInspect(ctx, ref); err != nil {
		return nil, fmt.Errorf("docker: inspect image %s: %w", ref, err)
	}
	return overlayLayers(res.GraphDriver), nil
}

func (d *Driver) pull(ctx context.Context, ref string, auth *runtime.Auth) error {
	opts := client.ImagePullOptions{}
	if auth != nil {
		named, err := reference.ParseNormalizedNamed(ref)
		if err != nil {
			return fmt.Errorf("docker: image %s: %w", ref, err)
		}
		opts.RegistryAuth, err = authconfig.Encode(registry.AuthConfig{
			Username:      auth.Username,
			Password:      auth.Password,
			ServerAddress: reference.Domain(named),
		})
		if err != nil {
			return fmt.Errorf("docker: encode pull auth: %w", err)
		}
	}
	resp, err := d.c.ImagePull(ctx, ref, opts)
	if err != nil {
		return fmt.Errorf("docker: pull %s: %w", ref, err)
	}
	defer resp.Close()
	if err := resp.Wait(ctx); err != nil {
		return fmt.Errorf("docker: pull %s: %w", ref, err)
	}
	return nil
}
