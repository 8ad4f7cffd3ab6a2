package docker

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/moby/moby/client"
)

// Start mounts the disk when needed (after a host reboot nothing is
// mounted) and starts the container.
func (d *Driver) Start(ctx context.Context, id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	unlock := d.locks.lock(id)
	defer unlock()
	if err := d.mountIfPresent(id); err != nil {
		return err
	}
	_, err := d.c.ContainerStart(ctx, d.name(id), client.ContainerStartOptions{})
	if err != nil {
		return missing(err, "start", id)
	}
	return nil
}

// mountIfPresent mounts an existing disk; a missing one is left for the
// container start to report (its bind sources do not exist).
func (d *Driver) mountIfPresent(id string) error {
	img := d.diskPath(id)
	if _, err := os.Stat(img); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := mountDisk(img, d.mountPath(id)); err != nil {
		return errorf("mount disk of %s: %w", id, err)
	}
	return nil
}
