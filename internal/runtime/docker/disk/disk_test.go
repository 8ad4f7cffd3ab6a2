package disk_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/svc-dev/svc/internal/runtime/docker/disk"
)

func needRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("loop devices and mounts need root")
	}
}

// TestMakeMountQuota makes two disks of one size at once, mounts one,
// fills it to ENOSPC and unmounts it leaving no loop device.
func TestMakeMountQuota(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	tm := &disk.Templates{Dir: dir}
	const size = 32 << 20
	imgs := []string{filepath.Join(dir, "a.img"), filepath.Join(dir, "b.img")}
	var wg sync.WaitGroup
	errs := make([]error, len(imgs))
	for i, img := range imgs {
		wg.Go(func() { errs[i] = tm.Make(img, size) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, img := range imgs {
		var st syscall.Stat_t
		if err := syscall.Stat(img, &st); err != nil {
			t.Fatal(err)
		}
		if st.Size != size || st.Blocks*512 > size/4 {
			t.Errorf("%s: size %d, allocated %d; want %d, sparse", img, st.Size, st.Blocks*512, size)
		}
	}
	mnt := filepath.Join(dir, "mnt")
	img := imgs[0]
	for range 2 { // the second is a no-op
		if err := disk.Mount(img, mnt); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { disk.Unmount(img, mnt) })
	if ok, err := disk.Mounted(mnt); !ok || err != nil {
		t.Fatalf("mounted: %v %v", ok, err)
	}
	if loops, _ := disk.Loops(img); len(loops) != 1 {
		t.Fatalf("loop devices of %s: %v", img, loops)
	}
	f, err := os.Create(filepath.Join(mnt, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	var written int64
	for {
		n, err := f.Write(buf)
		written += int64(n)
		if err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("write: %v", err)
			}
			break
		}
		if written > 2*size {
			t.Fatal("wrote past the disk size")
		}
	}
	f.Close()
	if written < size*3/4 {
		t.Errorf("ENOSPC after %d bytes of a %d disk", written, size)
	}

	for range 2 {
		if err := disk.Unmount(img, mnt); err != nil {
			t.Fatal(err)
		}
	}
	if ok, _ := disk.Mounted(mnt); ok {
		t.Error("still mounted")
	}
	if loops, _ := disk.Loops(img); len(loops) != 0 {
		t.Errorf("loop devices left: %v", loops)
	}
	// The data outlives the mount.
	if err := disk.Mount(img, mnt); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(mnt, "fill")); err != nil || fi.Size() != written {
		t.Errorf("after remount: %v %v, want %d bytes", fi, err, written)
	}
}
