package disk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// loFlagsAutoclear makes the kernel free the loop device when its last user
// (the mount) goes away, so an unmount leaves no loop device behind.
const loFlagsAutoclear = 4

// attachLoop binds img to a free loop device and returns the open device.
// The caller mounts it and then closes the file: with autoclear, closing it
// before the mount holds a reference would free the device at once.
// Ioctls instead of losetup(8) save a fork and exec on every create.
func attachLoop(img string) (*os.File, error) {
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer ctl.Close()
	backing, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer backing.Close()
	var lastErr error
	// Another process may take the device GET_FREE handed us; try again.
	for range 50 {
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			return nil, fmt.Errorf("loop-control: %w", err)
		}
		dev, err := openLoop(n)
		if err != nil {
			return nil, err
		}
		cfg := unix.LoopConfig{Fd: uint32(backing.Fd())}
		cfg.Info.Flags = loFlagsAutoclear
		copy(cfg.Info.File_name[:len(cfg.Info.File_name)-1], img)
		err = unix.IoctlLoopConfigure(int(dev.Fd()), &cfg)
		if err == nil {
			return dev, nil
		}
		dev.Close()
		lastErr = err
		if !errors.Is(err, unix.EBUSY) {
			return nil, fmt.Errorf("configure %s: %w", dev.Name(), err)
		}
	}
	return nil, fmt.Errorf("no free loop device: %w", lastErr)
}

// openLoop opens /dev/loopN; devtmpfs may need a moment to add a node that
// GET_FREE just created.
func openLoop(n int) (*os.File, error) {
	path := fmt.Sprintf("/dev/loop%d", n)
	for i := 0; ; i++ {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err == nil || !errors.Is(err, os.ErrNotExist) || i == 50 {
			return f, err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Loops lists the loop devices whose backing file is img (its real path,
// as the kernel names it).
func Loops(img string) ([]string, error) {
	paths, err := filepath.Glob("/sys/block/loop*/loop/backing_file")
	if err != nil {
		return nil, err
	}
	var devs []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // detached between glob and read
		}
		backing := strings.TrimSuffix(strings.TrimSpace(string(b)), " (deleted)")
		if backing == img {
			devs = append(devs, "/dev/"+filepath.Base(filepath.Dir(filepath.Dir(p))))
		}
	}
	return devs, nil
}

// detachLoops frees every loop device still bound to img: left by a crash
// between attach and mount, or by autoclear running asynchronously.
func detachLoops(img string) error {
	for i := 0; ; i++ {
		devs, err := Loops(img)
		if err != nil || len(devs) == 0 {
			return err
		}
		if i == 100 {
			return fmt.Errorf("loop devices still bound to %s: %v", img, devs)
		}
		for _, dev := range devs {
			f, err := os.OpenFile(dev, os.O_RDWR, 0)
			if err != nil {
				continue
			}
			// ENXIO: already free; EBUSY: still mounted somewhere, retried.
			_ = unix.IoctlSetInt(int(f.Fd()), unix.LOOP_CLR_FD, 0)
			f.Close()
		}
		time.Sleep(20 * time.Millisecond)
	}
}
