package registry

import (
	"context"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/svc-dev/svc/internal/fault"
)

// MaxImageBytes caps a stored image: config plus compressed layers, 8 GB
// decimal (spec: Limits).
const MaxImageBytes int64 = 8_000_000_000

// maxConfigBytes caps the image config, which is read whole to check its
// platform; real configs are a few kilobytes.
const maxConfigBytes = 16 << 20

// Import copies the linux/amd64 image at src into repo, tagging it with tag
// when tag is not empty. auth, when not nil, is used for this copy only.
// An image that cannot be pulled, is not linux/amd64 or is malformed is a
// fault.InvalidRequest; one over MaxImageBytes is a fault.ImageTooLarge,
// found from the manifest before any blob is read. Blobs stream from the
// source into the registry, several at a time; cancelling ctx stops the copy.
func (r *Registry) Import(ctx context.Context, src string, auth *Auth, repo, tag string) (Image, error) {
	dst, err := r.destination(repo, tag)
	if err != nil {
		return Image{}, err
	}
	ref, err := name.ParseReference(src)
	if err != nil {
		return Image{}, fault.Invalid("image_ref %q is not a valid image reference", src)
	}
	var authenticator authn.Authenticator = authn.Anonymous
	if auth != nil {
		authenticator = &authn.Basic{Username: auth.Username, Password: auth.Password}
	}
	opts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuth(authenticator),
		remote.WithJobs(copyJobs),
		remote.WithUserAgent("svcd"),
	}
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return Image{}, sourceError(ctx, err, src, auth)
	}
	var img v1.Image
	switch desc.MediaType {
	case types.OCIImageIndex, types.DockerManifestList:
		idx, err := desc.ImageIndex()
		if err == nil {
			img, err = pickAmd64(idx)
		}
		if err != nil {
			return Image{}, sourceError(ctx, err, src, auth)
		}
	case types.OCIManifestSchema1, types.DockerManifestSchema2:
		if img, err = desc.Image(); err != nil {
			return Image{}, sourceError(ctx, err, src, auth)
		}
	default:
		return Image{}, fault.Invalid("image_ref %q is not a container image (manifest media type %q)", src, desc.MediaType)
	}
	size, err := checkImage(img)
	if err != nil {
		return Image{}, sourceError(ctx, err, src, auth)
	}
	out, err := r.store(ctx, img, dst, size)
	if err != nil {
		return Image{}, sourceError(ctx, err, src, auth)
	}
	return out, nil
}

// destination is where an import goes: a repository and an optional tag.
type destination struct {
	repo name.Repository
	tag  string
}

// destination validates repo and tag.
func (r *Registry) destination(repo, tag string) (destination, error) {
	if err := ValidRepo(repo); err != nil {
		return destination{}, err
	}
	if tag != "" {
		if err := validTag(tag); err != nil {
			return destination{}, err
		}
	}
	lr, err := r.localRepo(repo)
	if err != nil {
		return destination{}, err
	}
	return destination{repo: lr, tag: tag}, nil
}

// pickAmd64 returns the linux/amd64 image of an index. Entries that name no
// platform are tried after explicit matches, their config deciding; other
// platforms (and attestation entries, unknown/unknown) are skipped. A nested
// index (an OCI layout's index.json pointing at a multi-platform index) is
// searched too.
func pickAmd64(idx v1.ImageIndex) (v1.Image, error) {
	seen := map[string]bool{}
	img, err := findAmd64(idx, seen, 0)
	if err != nil || img != nil {
		return img, err
	}
	found := make([]string, 0, len(seen))
	for p := range seen {
		found = append(found, p)
	}
	sort.Strings(found)
	if len(found) == 0 {
		return nil, fault.Invalid("image has no linux/amd64 image; only linux/amd64 is supported")
	}
	return nil, fault.Invalid("image has no linux/amd64 image (it has %s); only linux/amd64 is supported", strings.Join(found, ", "))
}

func findAmd64(idx v1.ImageIndex, seen map[string]bool, depth int) (v1.Image, error) {
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var exact, unnamed, nested []v1.Descriptor
	for _, d := range im.Manifests {
		p := d.Platform
		switch {
		case d.MediaType.IsIndex():
			nested = append(nested, d)
		case !d.MediaType.IsImage():
		case p == nil:
			unnamed = append(unnamed, d)
		case p.OS == "linux" && p.Architecture == "amd64":
			exact = append(exact, d)
		case p.OS == "unknown" && p.Architecture == "unknown":
			// a build attestation, not an image
		default:
			seen[p.OS+"/"+p.Architecture] = true
		}
	}
	for _, d := range append(exact, unnamed...) {
		img, err := idx.Image(d.Digest)
		if err != nil {
			return nil, err
		}
		if d.Platform != nil {
			return img, nil // its config is checked like any image's
		}
		cf, err := readConfig(img)
		if err != nil {
			return nil, err
		}
		if cf.OS == "linux" && cf.Architecture == "amd64" {
			return img, nil
		}
		seen[orUnset(cf.OS)+"/"+orUnset(cf.Architecture)] = true
	}
	if depth > 0 {
		return nil, nil
	}
	for _, d := range nested {
		child, err := idx.ImageIndex(d.Digest)
		if err != nil {
			return nil, err
		}
		if img, err := findAmd64(child, seen, depth+1); err != nil || img != nil {
			return img, err
		}
	}
	return nil, nil
}

// checkImage enforces the size cap from the manifest alone, then reads the
// config to check its platform. It returns the image's stored size.
func checkImage(img v1.Image) (int64, error) {
	m, err := img.Manifest()
	if err != nil {
		return 0, err
	}
	size := m.Config.Size
	if size < 0 {
		return 0, fault.Invalid("image manifest has a config of negative size")
	}
	if size > MaxImageBytes {
		return 0, tooLarge(size)
	}
	for _, l := range m.Layers {
		if l.Size < 0 {
			return 0, fault.Invalid("image manifest has a layer of negative size")
		}
		// Checked per layer too, so the sum cannot overflow.
		if l.Size > MaxImageBytes || size+l.Size > MaxImageBytes {
			return 0, tooLarge(size + min(l.Size, MaxImageBytes+1))
		}
		size += l.Size
	}
	cf, err := readConfig(img)
	if err != nil {
		return 0, err
	}
	if cf.OS != "linux" || cf.Architecture != "amd64" {
		return 0, fault.Invalid("image is %s/%s; only linux/amd64 is supported", orUnset(cf.OS), orUnset(cf.Architecture))
	}
	return size, nil
}

func tooLarge(atLeast int64) error {
	return fault.New(fault.ImageTooLarge, "image is over %d bytes (config and compressed layers, at least %d); the limit is 8 GB", MaxImageBytes, atLeast)
}

// readConfig reads the image config, refusing one too large to be real.
func readConfig(img v1.Image) (*v1.ConfigFile, error) {
	m, err := img.Manifest()
	if err != nil {
		return nil, err
	}
	if m.Config.Size < 0 || m.Config.Size > maxConfigBytes {
		return nil, fault.Invalid("image config of %d bytes is not a container image config", m.Config.Size)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		if _, ok := fault.As(err); ok {
			return nil, err
		}
		if isTransportError(err) {
			return nil, err // unpullable, classified by the caller
		}
		return nil, fault.Wrap(err, fault.InvalidRequest, "image config is not a valid container image config")
	}
	return cf, nil
}

func orUnset(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}

// store pushes img to dst, by tag when there is one, else by digest.
func (r *Registry) store(ctx context.Context, img v1.Image, dst destination, size int64) (Image, error) {
	digest, err := img.Digest()
	if err != nil {
		return Image{}, err
	}
	var ref name.Reference = dst.repo.Digest(digest.String())
	if dst.tag != "" {
		ref = dst.repo.Tag(dst.tag)
	}
	if err := remote.Write(ref, img, r.localOptions(ctx)...); err != nil {
		return Image{}, err
	}
	return Image{Digest: digest.String(), SizeBytes: size}, nil
}
