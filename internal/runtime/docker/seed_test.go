package docker

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/moby/moby/client"
	"golang.org/x/sys/unix"

	"github.com/svc-dev/svc/internal/testimage"
)

// TestSeedPathsAgree seeds two disks from one multi-layer image, one from
// the overlay2 layers and one through a throwaway container, and wants the
// same trees: whiteouts applied, owners, modes (setuid too), symlinks and
// times kept.
func TestSeedPathsAgree(t *testing.T) {
	testimage.RequireDocker(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	img := testimage.Push(t, testimage.StartRegistry(t), "seed/paths", testimage.Options{
		Files: []testimage.File{
			{Path: "/home/u", Mode: fs.ModeDir | 0o750, UID: 1000, GID: 1000},
			{Path: "/home/u/a.txt", Content: []byte("a"), Mode: 0o640, UID: 1000, GID: 1000},
			{Path: "/home/u/bin/tool", Content: []byte("#!/bin/sh\n"), Mode: fs.ModeSetuid | 0o755},
			{Path: "/home/u/gone.txt", Content: []byte("deleted above")},
			{Path: "/home/u/link", Content: []byte("a.txt"), Mode: fs.ModeSymlink},
			{Path: "/root/.rc", Content: []byte("rc"), Mode: 0o600},
		},
		Layers: [][]testimage.File{{
			{Path: "/home/u/gone.txt", Whiteout: true},
			{Path: "/home/u/added.txt", Content: []byte("from layer 3"), Mode: 0o604, UID: 1000, GID: 1000},
		}},
		Entrypoint: []string{"/bin/sleep", "1000"},
	})
	t.Cleanup(func() {
		if c, err := client.New(client.FromEnv); err == nil {
			c.ImageRemove(context.Background(), img.Ref, client.ImageRemoveOptions{Force: true})
			c.Close()
		}
	})
	d, err := New(t.Context(), Config{DataDir: t.TempDir(), Install: "test-" + rand.Text()[:8]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	layers, err := d.ensureImage(t.Context(), img.Ref, nil)
	if err != nil {
		t.Fatal(err)
	}

	seedWith := func(id string, fn func() error) map[string]string {
		t.Cleanup(func() {
			if err := d.Remove(context.Background(), id); err != nil {
				t.Error(err)
			}
		})
		need, err := d.ensureDisk(id, 32<<20)
		if err != nil || !need {
			t.Fatalf("disk: need seed %v, %v", need, err)
		}
		if err := fn(); err != nil {
			t.Fatalf("seed %s: %v", id, err)
		}
		return snapshot(t, d.mountPath(id))
	}
	viaContainer := seedWith("byctr", func() error { return d.seedFromContainer(t.Context(), "byctr", img.Ref) })
	for path, want := range map[string]string{
		"home/u":           "dir 750 1000:1000",
		"home/u/a.txt":     "file 640 1000:1000",
		"home/u/added.txt": "file 604 1000:1000",
		"home/u/bin/tool":  "file 4755 0:0",
		"home/u/link":      "symlink a.txt",
		"root":             "dir 700 0:0",
		"root/.rc":         "file 600 0:0",
	} {
		if got := viaContainer[path]; len(got) < len(want) || got[:len(want)] != want {
			t.Errorf("%s: %q, want %q...", path, got, want)
		}
	}
	if got, ok := viaContainer["home/u/gone.txt"]; ok {
		t.Errorf("whiteout not applied: gone.txt %s", got)
	}

	if len(layers) == 0 {
		t.Skip("the engine's storage is not overlay2 on this host; only the container path ran")
	}
	if len(layers) != 3 {
		t.Fatalf("layers %v, want 3", layers)
	}
	viaLayers := seedWith("bylayers", func() error { return d.seedFromLayers("bylayers", layers) })
	if diff := cmp.Diff(viaContainer, viaLayers); diff != "" {
		t.Errorf("seed paths disagree (-container +layers):\n%s", diff)
	}
	if left, _ := os.ReadDir(filepath.Join(d.cfg.DataDir, "tmp")); len(left) > 0 {
		t.Errorf("overlay mount points left: %v", left)
	}
}

// snapshot describes every entry under root/home and root/root.
func snapshot(t *testing.T, root string) map[string]string {
	out := map[string]string{}
	for _, top := range seedTrees {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, _ fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			var st unix.Stat_t
			if err := unix.Lstat(p, &st); err != nil {
				return err
			}
			meta := fmt.Sprintf("%o %d:%d mtime %d", st.Mode&0o7777, st.Uid, st.Gid, st.Mtim.Sec)
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFDIR:
				out[rel] = "dir " + meta
			case unix.S_IFLNK:
				dest, _ := os.Readlink(p)
				out[rel] = "symlink " + dest + " " + fmt.Sprintf("%d:%d", st.Uid, st.Gid)
			case unix.S_IFREG:
				b, _ := os.ReadFile(p)
				out[rel] = fmt.Sprintf("file %s sha256 %x", meta, sha256.Sum256(b))
			default:
				out[rel] = fmt.Sprintf("other %o", st.Mode)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}
