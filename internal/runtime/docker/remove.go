package docker

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
	"golang.org/x/sys/unix"

	"github.com/svc-dev/svc/internal/runtime/docker/disk"
)

// Remove deletes the container (and a leftover seed container), unmounts
// the disk, frees its loop device and deletes the image file and the mount
// point. Each step skips what is already gone, so a Remove cut short by a
// crash finishes on the next call.
func (d *Driver) Remove(ctx context.Context, id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	unlock := d.locks.lock(id)
	defer unlock()
	for _, name := range []string{d.seedName(id), d.name(id)} {
		if err := d.removeGone(ctx, name); err != nil {
			return errorf("remove container %s: %w", name, err)
		}
	}
	// An overlay of image layers left by a crash in the middle of a seed.
	if seed := d.seedMountPath(id); exists(seed) {
		_ = unix.Unmount(seed, unix.MNT_DETACH)
		if err := os.Remove(seed); err != nil {
			return errorf("remove seed mount of %s: %w", id, err)
		}
	}
	img, mnt := d.diskPath(id), d.mountPath(id)
	if err := disk.Unmount(img, mnt); err != nil {
		return errorf("remove disk of %s: %w", id, err)
	}
	for _, p := range []string{img, img + ".tmp"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return errorf("remove disk of %s: %w", id, err)
		}
	}
	// The mount point is unmounted, so anything in it lives on the host
	// disk (written there while no disk was mounted) and goes too.
	if err := os.RemoveAll(mnt); err != nil {
		return errorf("remove mount point of %s: %w", id, err)
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// removeGone removes a container and waits out a removal already under way
// (the engine answers that with a conflict).
func (d *Driver) removeGone(ctx context.Context, name string) error {
	for i := 0; ; i++ {
		err := d.removeContainer(ctx, name)
		if err == nil {
			return nil
		}
		if !cerrdefs.IsConflict(err) || !strings.Contains(err.Error(), "in progress") || i == 100 {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// removeContainer force-removes a container, ignoring one that is gone.
func (d *Driver) removeContainer(ctx context.Context, nameOrID string) error {
	_, err := d.c.ContainerRemove(ctx, nameOrID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return err
	}
	return nil
}
