package docker

import (
	"context"
	"os"
	"sort"
	"strings"

	"github.com/moby/moby/client"
)

// List returns every instance id of this install with a container (seed
// containers included), a disk image or a mount point, so the reconciler
// also finds what a crash left half made or half removed.
func (d *Driver) List(ctx context.Context) ([]string, error) {
	res, err := d.c.ContainerList(ctx, client.ContainerListOptions{
		All:     true,
		Filters: client.Filters{}.Add("label", LabelInstall+"="+d.cfg.Install),
	})
	if err != nil {
		return nil, errorf("list containers: %w", err)
	}
	ids := map[string]bool{}
	for _, c := range res.Items {
		if id := c.Labels[LabelInstance]; id != "" && c.Labels[LabelInstall] == d.cfg.Install {
			ids[id] = true
		}
	}
	disks, err := os.ReadDir(diskDir(d.cfg.DataDir))
	if err != nil {
		return nil, errorf("list disks: %w", err)
	}
	for _, e := range disks {
		if id, ok := strings.CutSuffix(e.Name(), ".img"); ok && checkID(id) == nil && !strings.HasPrefix(id, ".") {
			ids[id] = true
		}
	}
	mnts, err := os.ReadDir(mountDir(d.cfg.DataDir))
	if err != nil {
		return nil, errorf("list mount points: %w", err)
	}
	for _, e := range mnts {
		if checkID(e.Name()) == nil {
			ids[e.Name()] = true
		}
	}
	out := make([]string, 0, len(ids))
	for id := range ids {
		out = append(out, id)
	}
	sort.Strings(out)
	return out, nil
}
