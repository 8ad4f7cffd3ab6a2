package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/moby/moby/api/types/storage"
	"golang.org/x/sys/unix"
)

// seedTrees are the image directories copied onto a new disk, which then
// hides them behind its bind mounts.
var seedTrees = []string{"home", "root"}

// maxMountData is the kernel's limit on mount options (one page); an image
// with too many layers for one overlay mount is seeded through a container.
const maxMountData = 4000

// seed copies the image's own /home and /root onto the fresh disk, so images
// that ship files in a home keep them, and then marks the disk seeded.
//
// With the overlay2 storage driver (the engine's default) the image's layer
// directories are read straight from the host through a read-only overlay
// mount, in a few milliseconds. Anything else, or any failure there, falls
// back to the engine's archive API on a throwaway container, which takes
// about 100 ms: on the create path that was the largest cost after the
// start itself.
func (d *Driver) seed(ctx context.Context, id, image string, layers []string) error {
	var err error
	if len(layers) > 0 {
		err = d.seedFromLayers(id, layers)
	}
	if len(layers) == 0 || err != nil {
		if err2 := d.seedFromContainer(ctx, id, image); err2 != nil {
			return fmt.Errorf("docker: seed disk of %s: %w", id, errors.Join(err, err2))
		}
	}
	f, err := os.Create(filepath.Join(d.mountPath(id), seededMark))
	if err != nil {
		return fmt.Errorf("docker: seed disk of %s: %w", id, err)
	}
	return f.Close()
}

// seedMountPath is where the merged layers are mounted while seeding.
func (d *Driver) seedMountPath(id string) string {
	return filepath.Join(d.cfg.DataDir, "tmp", "seed-"+id)
}

// overlayLayers returns an image's layer directories, top first, when the
// engine stores it with overlay2 on this host; nil otherwise.
func overlayLayers(gd *storage.DriverData) []string {
	if gd == nil || gd.Name != "overlay2" || gd.Data["UpperDir"] == "" {
		return nil
	}
	layers := []string{gd.Data["UpperDir"]}
	if lower := gd.Data["LowerDir"]; lower != "" {
		layers = append(layers, strings.Split(lower, ":")...)
	}
	for _, l := range layers {
		if fi, err := os.Stat(l); err != nil || !fi.IsDir() {
			return nil // not on this host's filesystem (svcd in a container)
		}
	}
	return layers
}

// seedFromLayers merges the layers with a read-only overlay mount (the
// kernel resolves whiteouts and opaque directories exactly as the engine
// will) and copies the home trees from it. A single layer needs no merge.
func (d *Driver) seedFromLayers(id string, layers []string) error {
	src := layers[0]
	if len(layers) > 1 {
		opts := "lowerdir=" + strings.Join(layers, ":")
		if len(opts) > maxMountData {
			return fmt.Errorf("%d layers: overlay options too long", len(layers))
		}
		src = d.seedMountPath(id)
		if err := os.MkdirAll(src, 0o700); err != nil {
			return err
		}
		defer os.Remove(src)
		if err := unix.Mount("overlay", src, "overlay", unix.MS_RDONLY|unix.MS_NODEV|unix.MS_NOSUID, opts); err != nil {
			return fmt.Errorf("overlay mount: %w", err)
		}
		defer unix.Unmount(src, unix.MNT_DETACH)
	}
	mnt := d.mountPath(id)
	for _, top := range seedTrees {
		from := filepath.Join(src, top)
		fi, err := os.Lstat(from)
		if err != nil || !fi.IsDir() {
			continue // absent, or a symlink to elsewhere: keep the empty home
		}
		if err := copyTree(from, filepath.Join(mnt, top)); err != nil {
			return fmt.Errorf("copy /%s: %w", top, err)
		}
	}
	return nil
}
