package docker

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

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"golang.org/x/sys/unix"
)

// seedFromContainer copies /home and /root through the engine's archive API
// from a throwaway container of the image, never started and without a
// network. It works with every storage driver, at about 50 ms per
// directory; the instance container cannot serve, as its archive API reads
// through the bind mounts and would return the empty disk.
func (d *Driver) seedFromContainer(ctx context.Context, id, image string) error {
	name := d.seedName(id)
	d.removeContainer(ctx, name) // a leftover of a crashed create
	created, err := d.c.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name: name,
		Config: &container.Config{
			Image:  image,
			Labels: d.labels(id, "seed"),
			// Never run; set so images without a command can be created.
			Entrypoint: []string{"/nonexistent"},
		},
		HostConfig: &container.HostConfig{NetworkMode: "none"},
	})
	if err != nil {
		return fmt.Errorf("create seed container: %w", err)
	}
	defer d.removeContainer(context.WithoutCancel(ctx), created.ID)

	mnt := d.mountPath(id)
	for _, top := range seedTrees {
		res, err := d.c.CopyFromContainer(ctx, created.ID, client.CopyFromContainerOptions{SourcePath: "/" + top})
		if cerrdefs.IsNotFound(err) {
			continue // the image has no such directory
		}
		if err != nil {
			return fmt.Errorf("copy /%s: %w", top, err)
		}
		err = extractTree(res.Content, mnt, top)
		res.Content.Close()
		if err != nil {
			return fmt.Errorf("extract /%s: %w", top, err)
		}
	}
	return nil
}

// extractTree writes the archive of one top directory under root, keeping
// owners, modes, times and extended attributes. An entry is written only
// below a directory this extraction made itself, so no symlink in the
// archive can redirect a write outside root.
func extractTree(r io.Reader, root, top string) error {
	tr := tar.NewReader(r)
	dirs := map[string]bool{}
	var dirHeaders []*tar.Header
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if name != top && (!strings.HasPrefix(name, top+"/") || !dirs[path.Dir(name)]) {
			continue // outside the tree, or under something that is not a directory
		}
		target := filepath.Join(root, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := mkdirFresh(target); err != nil {
				return err
			}
			dirs[name] = true
			dirHeaders = append(dirHeaders, h)
		case tar.TypeReg:
			if name == top {
				continue
			}
			if err := writeFile(target, tr); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if name == top {
				continue // keep our directory; the image's home is elsewhere
			}
			if err := replace(target, func() error { return os.Symlink(h.Linkname, target) }); err != nil {
				return err
			}
		case tar.TypeLink:
			src := path.Clean(h.Linkname)
			if !strings.HasPrefix(src, top+"/") || !dirs[path.Dir(src)] {
				continue
			}
			srcPath := filepath.Join(root, filepath.FromSlash(src))
			if err := replace(target, func() error { return os.Link(srcPath, target) }); err != nil {
				return err
			}
		case tar.TypeFifo:
			if err := replace(target, func() error { return unix.Mkfifo(target, 0o600) }); err != nil {
				return err
			}
		default:
			continue // devices are useless on a nodev disk
		}
		if err := applyMeta(target, h); err != nil {
			return err
		}
	}
	// Directory times last: writing their entries moved them.
	for i := len(dirHeaders) - 1; i >= 0; i-- {
		h := dirHeaders[i]
		setTimes(filepath.Join(root, filepath.FromSlash(path.Clean(h.Name))), h)
	}
	return nil
}

// applyMeta sets owner, then mode (chown clears setuid bits), then xattrs
// and times, never following a symlink.
func applyMeta(target string, h *tar.Header) error {
	if err := os.Lchown(target, h.Uid, h.Gid); err != nil {
		return err
	}
	if h.Typeflag != tar.TypeSymlink {
		if err := unix.Fchmodat(unix.AT_FDCWD, target, uint32(h.Mode&0o7777), 0); err != nil {
			return err
		}
	}
	for k, v := range h.PAXRecords {
		if attr, ok := strings.CutPrefix(k, "SCHILY.xattr."); ok {
			// Best effort: the disk takes user.* and security.* attributes,
			// but an image may carry others.
			_ = unix.Lsetxattr(target, attr, []byte(v), 0)
		}
	}
	if h.Typeflag != tar.TypeDir {
		setTimes(target, h)
	}
	return nil
}

func setTimes(target string, h *tar.Header) {
	at := h.AccessTime
	if at.IsZero() {
		at = h.ModTime
	}
	ts := []unix.Timespec{unix.NsecToTimespec(at.UnixNano()), unix.NsecToTimespec(h.ModTime.UnixNano())}
	_ = unix.UtimesNanoAt(unix.AT_FDCWD, target, ts, unix.AT_SYMLINK_NOFOLLOW)
}
