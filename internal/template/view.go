package template

import (
	"context"
	"errors"

	"github.com/svc-dev/svc/internal/fault"
	"github.com/svc-dev/svc/internal/store"
	"github.com/svc-dev/svc/sdk"
)

func systemView(sys System, rel *store.Release) sdk.Template {
	t := sdk.Template{Name: sys.Name, Scope: "system", DefaultPort: sys.DefaultPort, Description: sys.Description}
	if rel != nil {
		ref, digest := rel.ImageRef, rel.ImageDigest
		t.ImageRef, t.ImageDigest, t.Tag, t.Created = &ref, &digest, rel.Tag, rel.Created
	}
	return t
}

func workspaceView(t store.Template, rev store.Revision) sdk.Template {
	digest := rev.ImageDigest
	port := t.DefaultPort
	if port == 0 {
		port = GatewayPort // the bare URL falls back to 3737
	}
	n := rev.Revision
	return sdk.Template{Name: t.Name, Scope: "workspace", ImageRef: rev.ImageRef, ImageDigest: &digest,
		DefaultPort: port, Description: t.Description, Revision: &n, Created: t.Created}
}

// List returns the system catalog, then the workspace's templates by name.
func (s *Service) List(ctx context.Context, ws string) ([]sdk.Template, error) {
	out := make([]sdk.Template, 0, len(Catalog))
	for _, sys := range Catalog {
		rel, err := s.latest(ctx, sys.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, systemView(sys, rel))
	}
	ts, err := s.st.Templates(ctx, ws)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		rev, err := s.st.TemplateRevision(ctx, ws, t.Name, t.Revision)
		if err != nil {
			return nil, err
		}
		out = append(out, workspaceView(t, rev))
	}
	return out, nil
}

// latest is a system template's newest release, nil before the first.
func (s *Service) latest(ctx context.Context, name string) (*store.Release, error) {
	rel, err := s.st.LatestRelease(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &rel, nil
}

// Get returns one template; ref may carry @<tag> (system) or @<revision>
// (workspace). An unknown name or unpublished version is not_found.
func (s *Service) Get(ctx context.Context, ws, ref string) (sdk.Template, error) {
	name, version, pinned := splitPin(ref)
	if sys, ok := SystemByName(name); ok {
		if !pinned {
			rel, err := s.latest(ctx, name)
			if err != nil {
				return sdk.Template{}, err
			}
			return systemView(sys, rel), nil
		}
		rel, err := s.st.ReleaseByTag(ctx, name, version)
		if errors.Is(err, store.ErrNotFound) {
			return sdk.Template{}, fault.NotFoundf("%s has no release tagged %q", name, version)
		}
		if err != nil {
			return sdk.Template{}, err
		}
		return systemView(sys, &rel), nil
	}
	t, err := s.st.Template(ctx, ws, name)
	if err != nil {
		return sdk.Template{}, notFound(err, name)
	}
	n := t.Revision
	if pinned {
		var ok bool
		if n, ok = revisionNumber(version); !ok {
			return sdk.Template{}, fault.NotFoundf("%s has no revision %q", name, version)
		}
	}
	rev, err := s.st.TemplateRevision(ctx, ws, name, n)
	if errors.Is(err, store.ErrNotFound) {
		return sdk.Template{}, fault.NotFoundf("%s has no revision %d", name, n)
	}
	if err != nil {
		return sdk.Template{}, err
	}
	view := workspaceView(t, rev)
	revs, err := s.st.Revisions(ctx, ws, name)
	if err != nil {
		return sdk.Template{}, err
	}
	for _, r := range revs {
		view.Revisions = append(view.Revisions, sdk.TemplateRevision{Revision: r.Revision, ImageRef: r.ImageRef, ImageDigest: r.ImageDigest, Created: r.Created})
	}
	return view, nil
}

// View renders a workspace template at its latest revision.
func (s *Service) View(ctx context.Context, t store.Template) (sdk.Template, error) {
	return s.Get(ctx, t.WorkspaceID, t.Name)
}
