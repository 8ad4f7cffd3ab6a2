package server

import (
	"context"

	"github.com/svc-dev/svc/internal/registry"
	"github.com/svc-dev/svc/internal/template"
	"github.com/svc-dev/svc/sdk"
)

// importer lets the template service copy images into the registry.
type importer struct{ reg *registry.Registry }

func (i importer) Import(ctx context.Context, src string, auth *sdk.RegistryAuth, repo string) (template.Image, error) {
	var a *registry.Auth
	if auth != nil {
		a = &registry.Auth{Username: auth.Username, Password: auth.Password}
	}
	img, err := i.reg.Import(ctx, src, a, repo, "")
	return template.Image{Digest: img.Digest, SizeBytes: img.SizeBytes}, err
}
