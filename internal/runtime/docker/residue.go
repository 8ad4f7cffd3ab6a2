package docker

import (
	"context"
	"os"

	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/runtime/docker/disk"
)

// Residue lists what exists on the host for id: containers, the disk image,
// the mount point, a mount, loop devices. After Remove it must be empty;
// the conformance suite checks that through this method.
func (d *Driver) Residue(ctx context.Context, id string) ([]string, error) {
	var out []string
	res, err := d.c.ContainerList(ctx, client.ContainerListOptions{
		All: true,
		Filters: client.Filters{}.
			Add("label", LabelInstall+"="+d.cfg.Install).
			Add("label", LabelInstance+"="+id),
	})
	if err != nil {
		return nil, errorf("residue of %s: %w", id, err)
	}
	for _, c := range res.Items {
		out = append(out, "container "+c.ID)
	}
	img, mnt := d.diskPath(id), d.mountPath(id)
	for _, p := range []string{img, img + ".tmp", mnt, d.seedMountPath(id)} {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, "path "+p)
		}
	}
	if ok, _ := disk.Mounted(mnt); ok {
		out = append(out, "mount "+mnt)
	}
	loops, err := disk.Loops(img)
	if err != nil {
		return nil, errorf("residue of %s: %w", id, err)
	}
	for _, l := range loops {
		out = append(out, "loop device "+l)
	}
	return out, nil
}
