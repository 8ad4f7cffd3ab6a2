package docker

import (
	"context"

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
