package registry

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/svc-dev/svc/internal/fault"
)

// ImportArchive stores the one image of a `docker save` tarball or an OCI
// image layout tarball, under the same linux/amd64 and size rules as Import.
// The archive is spooled to a temporary file under the registry's directory
// (docker save layers are found by re-reading the tar, and nothing is held in
// memory); uncompressed layers are gzipped on the way in.
func (r *Registry) ImportArchive(ctx context.Context, rd io.Reader, repo, tag string) (Image, error) {
	dst, err := r.destination(repo, tag)
	if err != nil {
		return Image{}, err
	}
	dir, err := os.MkdirTemp(r.tmpDir, "archive-")
	if err != nil {
		return Image{}, fmt.Errorf("registry: %w", err)
	}
	defer os.RemoveAll(dir)

	tarPath := filepath.Join(dir, "image.tar")
	names, err := spool(ctx, rd, tarPath)
	if err != nil {
		return Image{}, err
	}
	var img v1.Image
	switch {
	case names["manifest.json"]:
		img, err = tarball.ImageFromPath(tarPath, nil)
	case names["index.json"]:
		layoutDir := filepath.Join(dir, "layout")
		if err = extractLayout(ctx, tarPath, layoutDir); err != nil {
			return Image{}, err
		}
		var idx v1.ImageIndex
		if idx, err = layout.ImageIndexFromPath(layoutDir); err == nil {
			img, err = pickAmd64(idx)
		}
	default:
		return Image{}, fault.Invalid("archive is neither a docker save tarball (manifest.json) nor an OCI image layout (index.json)")
	}
	if err != nil {
		return Image{}, archiveError(err)
	}
	size, err := checkImage(img)
	if err != nil {
		return Image{}, archiveError(err)
	}
	out, err := r.store(ctx, img, dst, size)
	if err != nil {
		if ctx.Err() != nil {
			return Image{}, fmt.Errorf("registry: import archive: %w", ctx.Err())
		}
		var terr *transport.Error
		if errors.As(err, &terr) && terr.StatusCode >= 400 && terr.StatusCode < 500 {
			return Image{}, fault.Wrap(err, fault.InvalidRequest, "image was rejected by the registry: %s", diagnostics(terr))
		}
		return Image{}, fmt.Errorf("registry: store archive image: %w", err)
	}
	return out, nil
}

func archiveError(err error) error {
	if _, ok := fault.As(err); ok {
		return err
	}
	return fault.Wrap(err, fault.InvalidRequest, "archive does not hold a valid image")
}

// spool copies the archive to file and returns the names of its entries,
// stopping when ctx is done.
func spool(ctx context.Context, rd io.Reader, file string) (map[string]bool, error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	defer f.Close()
	names := map[string]bool{}
	tr := tar.NewReader(io.TeeReader(ctxReader{ctx, rd}, f))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fault.Wrap(err, fault.InvalidRequest, "archive is not a tar file")
		}
		names[cleanName(h.Name)] = true
	}
	// The tar reader stops at the end marker; keep the padding after it too.
	if _, err := io.Copy(f, ctxReader{ctx, rd}); err != nil {
		return nil, fmt.Errorf("registry: spool archive: %w", err)
	}
	return names, f.Close()
}

func cleanName(n string) string {
	return strings.TrimPrefix(path.Clean("/"+n), "/")
}

// extractLayout unpacks the OCI layout files of the tar at file into dir.
// Only index.json, oci-layout and blobs/ are written, as regular files, so a
// crafted entry name cannot escape dir.
func extractLayout(ctx context.Context, file, dir string) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	defer f.Close()
	tr := tar.NewReader(ctxReader{ctx, f})
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fault.Wrap(err, fault.InvalidRequest, "archive is not a tar file")
		}
		n := cleanName(h.Name)
		if h.Typeflag != tar.TypeReg || (n != "index.json" && n != "oci-layout" && !strings.HasPrefix(n, "blobs/")) {
			continue
		}
		out := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
			return fmt.Errorf("registry: %w", err)
		}
		w, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return fmt.Errorf("registry: %w", err)
		}
		_, err = io.Copy(w, tr)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("registry: extract %s: %w", n, err)
		}
	}
}

// ctxReader fails reads once ctx is done, so a long copy stops promptly.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
