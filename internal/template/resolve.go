package template

import (
	"context"
	"errors"
	"strings"

	"github.com/svc-dev/svc/internal/fault"
	"github.com/svc-dev/svc/internal/store"
)

// Resolved is a template string pinned to one image, as an instance runs it.
type Resolved struct {
	// Template is what the instance reports: the name with its pin, if any.
	Template string
	Name     string
	Scope    string // "system" or "workspace"
	System   *System
	Revision *int // workspace templates only
	ImageRef *string
	// Digest and Repo locate the image in private storage. Digest is empty
	// for a system template whose image has not been published yet.
	Digest string
	Repo   string
	// RoutePort is where the bare URL routes; ProbePort is the port probed
	// at boot (0: no probe).
	RoutePort int
	ProbePort int
	Agent     string
}

// Resolve turns a create's or update's template string into an image.
// Unknown names, unpublished versions, @latest, unknown svc- names and
// direct image references are invalid_request.
func (s *Service) Resolve(ctx context.Context, ws, ref string) (Resolved, error) {
	if ref == "" {
		ref = DefaultTemplate
	}
	name, version, pinned := splitPin(ref)
	if pinned && version == "latest" {
		return Resolved{}, fault.Invalid("@latest is not a version: use the bare name to follow the latest release")
	}
	if pinned && version == "" {
		return Resolved{}, fault.Invalid("template %q has an empty version after @", ref)
	}
	if strings.ContainsAny(name, "/:.") {
		return Resolved{}, fault.Invalid("direct image references are not accepted: register the image as a template (POST /v1/templates) and create from its name")
	}
	if sys, ok := SystemByName(name); ok {
		return s.resolveSystem(ctx, sys, ref, version, pinned)
	}
	if strings.HasPrefix(name, "svc-") {
		return Resolved{}, fault.Invalid("unknown system template %q", name)
	}
	t, err := s.st.Template(ctx, ws, name)
	if errors.Is(err, store.ErrNotFound) {
		return Resolved{}, fault.Invalid("unknown template %q", name)
	}
	if err != nil {
		return Resolved{}, err
	}
	n := t.Revision
	if pinned {
		var ok bool
		if n, ok = revisionNumber(version); !ok {
			return Resolved{}, fault.Invalid("workspace template versions are revision numbers: %q", ref)
		}
	}
	rev, err := s.st.TemplateRevision(ctx, ws, name, n)
	if errors.Is(err, store.ErrNotFound) {
		return Resolved{}, fault.Invalid("template %s has no revision %d", name, n)
	}
	if err != nil {
		return Resolved{}, err
	}
	route := t.DefaultPort
	if route == 0 {
		route = GatewayPort
	}
	return Resolved{Template: ref, Name: name, Scope: "workspace", Revision: &rev.Revision, ImageRef: rev.ImageRef,
		Digest: rev.ImageDigest, Repo: rev.Repo, RoutePort: route, ProbePort: t.DefaultPort}, nil
}

func (s *Service) resolveSystem(ctx context.Context, sys System, ref, tag string, pinned bool) (Resolved, error) {
	r := Resolved{Template: ref, Name: sys.Name, Scope: "system", System: &sys, RoutePort: sys.DefaultPort,
		ProbePort: sys.DefaultPort, Agent: sys.Agent, Repo: SystemRepo(sys.Name)}
	var rel store.Release
	var err error
	if pinned {
		rel, err = s.st.ReleaseByTag(ctx, sys.Name, tag)
		if errors.Is(err, store.ErrNotFound) {
			return Resolved{}, fault.Invalid("%s has no release tagged %q", sys.Name, tag)
		}
	} else {
		rel, err = s.st.LatestRelease(ctx, sys.Name)
		if errors.Is(err, store.ErrNotFound) {
			return r, nil // not built yet: the create fails with provisioning_failed
		}
	}
	if err != nil {
		return Resolved{}, err
	}
	imageRef := rel.ImageRef
	r.ImageRef, r.Digest, r.Repo = &imageRef, rel.ImageDigest, rel.Repo
	return r, nil
}
