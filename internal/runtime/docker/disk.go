package docker

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/svc-dev/svc/internal/runtime/docker/disk"
)

// On the disk: home/ and root/ are bound at /home and /root; seededMark sits
// beside them, out of the container's sight, once the image's own home
// content has been copied in.
const seededMark = ".svc-seeded"

func diskDir(dataDir string) string  { return filepath.Join(dataDir, "disks") }
func mountDir(dataDir string) string { return filepath.Join(dataDir, "mnt") }

func (d *Driver) diskPath(id string) string  { return filepath.Join(diskDir(d.cfg.DataDir), id+".img") }
func (d *Driver) mountPath(id string) string { return filepath.Join(mountDir(d.cfg.DataDir), id) }

// ensureDisk makes the instance disk when missing and mounts it when not
// mounted (a host reboot unmounts every disk). It reports whether the disk
// still lacks the image's home content.
func (d *Driver) ensureDisk(id string, size int64) (needSeed bool, err error) {
	img, mnt := d.diskPath(id), d.mountPath(id)
	if _, err := os.Stat(img); errors.Is(err, fs.ErrNotExist) {
		if err := d.disks.Make(img, size); err != nil {
			return false, fmt.Errorf("docker: make disk of %s: %w", id, err)
		}
	} else if err != nil {
		return false, fmt.Errorf("docker: disk of %s: %w", id, err)
	}
	if err := disk.Mount(img, mnt); err != nil {
		return false, fmt.Errorf("docker: mount disk of %s: %w", id, err)
	}
	for dir, mode := range map[string]fs.FileMode{"home": 0o755, "root": 0o700} {
		p := filepath.Join(mnt, dir)
		if err := os.Mkdir(p, mode); err == nil {
			_ = os.Chmod(p, mode) // past the umask
		} else if !errors.Is(err, fs.ErrExist) {
			return false, fmt.Errorf("docker: disk of %s: %w", id, err)
		}
	}
	_, err = os.Stat(filepath.Join(mnt, seededMark))
	return errors.Is(err, fs.ErrNotExist), nil
}

// mountIfPresent mounts an existing disk; a missing one is left for the
// container start to report (its bind sources do not exist).
func (d *Driver) mountIfPresent(id string) error {
	img := d.diskPath(id)
	if _, err := os.Stat(img); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := disk.Mount(img, d.mountPath(id)); err != nil {
		return errorf("mount disk of %s: %w", id, err)
	}
	return nil
}
