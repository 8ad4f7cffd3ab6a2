package template

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/svc-dev/svc/internal/fault"
	"github.com/svc-dev/svc/internal/store"
	"github.com/svc-dev/svc/sdk"
)

// Image is an image copied into private storage.
type Image struct {
	Digest    string
	SizeBytes int64
}

// Importer copies an image from a public reference into private storage
// (internal/registry). auth is used for this copy only.
type Importer interface {
	Import(ctx context.Context, src string, auth *sdk.RegistryAuth, repo string) (Image, error)
}

// Service manages templates.
type Service struct {
	st     *store.Store
	images Importer
}

// New returns a template service.
func New(st *store.Store, images Importer) *Service {
	return &Service{st: st, images: images}
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{1,62}$`)

// maxImageRef is the spec's image_ref length limit.
const maxImageRef = 255

func validName(name string) error {
	if !nameRE.MatchString(name) {
		return fault.Invalid("name must match ^[a-z][a-z0-9-]{1,62}$ (2 to 63 characters)")
	}
	if strings.HasPrefix(name, "svc-") {
		return fault.Invalid("the svc- prefix is reserved for system templates")
	}
	return nil
}

// ValidDefaultPort checks a default_port; builds share the rule.
func ValidDefaultPort(port int) error {
	if port < 1 || port > 65535 {
		return fault.Invalid("default_port must be between 1 and 65535")
	}
	if Reserved(port) {
		return fault.Invalid("default_port %d is reserved by the platform (reserved: 6080, 7681, 7890, 8080, 9119, 22022)", port)
	}
	return nil
}

func validImageRef(ref string) error {
	if ref == "" {
		return fault.Invalid("image_ref is required")
	}
	if len(ref) > maxImageRef {
		return fault.Invalid("image_ref is longer than %d characters", maxImageRef)
	}
	// A fully qualified reference names a registry or a namespace path:
	// "ubuntu" alone is ambiguous about where it comes from.
	if !strings.Contains(strings.SplitN(ref, "@", 2)[0], "/") {
		return fault.Invalid("image_ref must be fully qualified with a registry or namespace path (e.g. docker.io/library/ubuntu:24.04)")
	}
	return nil
}

func repoOf(ws, name string) string { return "ws/" + strings.ToLower(ws) + "/" + name }

// Create registers a workspace template, copying its image in.
func (s *Service) Create(ctx context.Context, ws string, req sdk.CreateTemplate) (store.Template, error) {
	if err := validName(req.Name); err != nil {
		return store.Template{}, err
	}
	if err := validImageRef(req.ImageRef); err != nil {
		return store.Template{}, err
	}
	port := 0
	if req.DefaultPort != nil {
		if err := ValidDefaultPort(*req.DefaultPort); err != nil {
			return store.Template{}, err
		}
		port = *req.DefaultPort
	}
	if _, err := s.st.Template(ctx, ws, req.Name); err == nil {
		return store.Template{}, fault.New(fault.TemplateConflict, "template %q already exists", req.Name)
	}
	img, err := s.images.Import(ctx, req.ImageRef, req.RegistryAuth, repoOf(ws, req.Name))
	if err != nil {
		return store.Template{}, err
	}
	ref := req.ImageRef
	t, err := s.st.CreateTemplate(ctx, store.Template{WorkspaceID: ws, Name: req.Name, Description: req.Description, DefaultPort: port},
		store.Revision{ImageRef: &ref, ImageDigest: img.Digest, Repo: repoOf(ws, req.Name), SizeBytes: img.SizeBytes})
	if errors.Is(err, store.ErrConflict) {
		return t, fault.New(fault.TemplateConflict, "template %q already exists", req.Name)
	}
	return t, err
}

// Update changes a workspace template. A new image_ref, or registry_auth
// (a re-copy of the current reference), publishes a new revision.
func (s *Service) Update(ctx context.Context, ws, name string, req sdk.UpdateTemplate) (store.Template, error) {
	if req.ImageRef == nil && req.RegistryAuth == nil && req.Description == nil && req.DefaultPort == nil {
		return store.Template{}, fault.Invalid("nothing to change: send image_ref, registry_auth, description or default_port")
	}
	if _, err := s.st.Template(ctx, ws, name); err != nil {
		return store.Template{}, notFound(err, name)
	}
	change := store.TemplateChange{Description: req.Description}
	if req.DefaultPort != nil {
		if err := ValidDefaultPort(*req.DefaultPort); err != nil {
			return store.Template{}, err
		}
		change.DefaultPort = req.DefaultPort
	}
	if req.ImageRef != nil || req.RegistryAuth != nil {
		ref := ""
		if req.ImageRef != nil {
			ref = *req.ImageRef
		} else {
			revs, err := s.st.Revisions(ctx, ws, name)
			if err != nil {
				return store.Template{}, err
			}
			if len(revs) == 0 || revs[0].ImageRef == nil {
				return store.Template{}, fault.Invalid("the current revision was published by a build; send image_ref with registry_auth")
			}
			ref = *revs[0].ImageRef
		}
		if err := validImageRef(ref); err != nil {
			return store.Template{}, err
		}
		img, err := s.images.Import(ctx, ref, req.RegistryAuth, repoOf(ws, name))
		if err != nil {
			return store.Template{}, err
		}
		change.Publish = &store.Revision{ImageRef: &ref, ImageDigest: img.Digest, Repo: repoOf(ws, name), SizeBytes: img.SizeBytes}
	}
	t, err := s.st.UpdateTemplate(ctx, ws, name, change)
	return t, notFound(err, name)
}

// Delete removes a workspace template. Instances keep running their image.
func (s *Service) Delete(ctx context.Context, ws, name string) error {
	if strings.HasPrefix(name, "svc-") {
		if _, ok := SystemByName(name); ok {
			return fault.Invalid("system templates are read-only")
		}
	}
	return notFound(s.st.DeleteTemplate(ctx, ws, name), name)
}

func notFound(err error, name string) error {
	if errors.Is(err, store.ErrNotFound) {
		return fault.NotFoundf("template %q not found", name)
	}
	return err
}

// splitPin splits "name@version".
func splitPin(ref string) (name, version string, pinned bool) {
	name, version, pinned = strings.Cut(ref, "@")
	return name, version, pinned
}

// revisionNumber parses a workspace pin.
func revisionNumber(v string) (int, bool) {
	n, err := strconv.Atoi(v)
	return n, err == nil && n > 0 && strconv.Itoa(n) == v
}
