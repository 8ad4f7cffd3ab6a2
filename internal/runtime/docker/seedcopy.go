package docker

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// copyTree copies the directory src onto the directory dst, keeping types,
// owners, modes, hard links, extended attributes and times. It walks
// without following symlinks and writes only below directories it made or
// checked itself, so nothing in src can redirect a write outside dst.
func copyTree(src, dst string) error {
	type inode struct{ dev, ino uint64 }
	links := map[inode]string{}
	type dirTimes struct {
		path string
		st   unix.Stat_t
	}
	var dirs []dirTimes
	err := filepath.WalkDir(src, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			if err := mkdirFresh(target); err != nil {
				return err
			}
			dirs = append(dirs, dirTimes{target, st})
		case unix.S_IFREG:
			if st.Nlink > 1 {
				key := inode{st.Dev, st.Ino}
				if first, ok := links[key]; ok {
					return replace(target, func() error { return os.Link(first, target) })
				}
				links[key] = target
			}
			if err := copyFile(p, target); err != nil {
				return err
			}
		case unix.S_IFLNK:
			dest, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := replace(target, func() error { return os.Symlink(dest, target) }); err != nil {
				return err
			}
		case unix.S_IFIFO:
			if err := replace(target, func() error { return unix.Mkfifo(target, 0o600) }); err != nil {
				return err
			}
		default:
			return nil // devices and sockets are useless on a nodev disk
		}
		return copyMeta(p, target, &st)
	})
	if err != nil {
		return err
	}
	// Directory times last: writing their entries moved them.
	for i := len(dirs) - 1; i >= 0; i-- {
		st := dirs[i].st
		_ = unix.UtimesNanoAt(unix.AT_FDCWD, dirs[i].path, []unix.Timespec{st.Atim, st.Mtim}, unix.AT_SYMLINK_NOFOLLOW)
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.OpenFile(src, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeFile(dst, in)
}

// copyMeta sets owner, then mode (chown clears setuid bits), extended
// attributes (not overlayfs' own) and, but for directories, times.
func copyMeta(src, dst string, st *unix.Stat_t) error {
	if err := os.Lchown(dst, int(st.Uid), int(st.Gid)); err != nil {
		return err
	}
	isLink := st.Mode&unix.S_IFMT == unix.S_IFLNK
	if !isLink {
		if err := unix.Fchmodat(unix.AT_FDCWD, dst, st.Mode&0o7777, 0); err != nil {
			return err
		}
	}
	copyXattrs(src, dst)
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		_ = unix.UtimesNanoAt(unix.AT_FDCWD, dst, []unix.Timespec{st.Atim, st.Mtim}, unix.AT_SYMLINK_NOFOLLOW)
	}
	return nil
}

// copyXattrs is best effort: the disk takes user.* and security.*
// attributes (file capabilities among them), an image may carry others.
func copyXattrs(src, dst string) {
	size, err := unix.Llistxattr(src, nil)
	if err != nil || size <= 0 {
		return
	}
	buf := make([]byte, size)
	if size, err = unix.Llistxattr(src, buf); err != nil {
		return
	}
	for _, name := range strings.Split(strings.TrimRight(string(buf[:size]), "\x00"), "\x00") {
		if name == "" || strings.HasPrefix(name, "trusted.overlay.") {
			continue
		}
		n, err := unix.Lgetxattr(src, name, nil)
		if err != nil || n < 0 {
			continue
		}
		val := make([]byte, n)
		if n, err = unix.Lgetxattr(src, name, val); err != nil {
			continue
		}
		_ = unix.Lsetxattr(dst, name, val[:n], 0)
	}
}

// mkdirFresh makes dir, replacing anything that is not a directory.
func mkdirFresh(dir string) error {
	if fi, err := os.Lstat(dir); err == nil {
		if fi.IsDir() {
			return nil
		}
		if err := os.Remove(dir); err != nil {
			return err
		}
	}
	return os.Mkdir(dir, 0o700)
}

// replace removes whatever is at target (a partial earlier seed) and makes
// it anew, so a write never goes through an old symlink.
func replace(target string, make func() error) error {
	if err := os.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) {
		if err := os.RemoveAll(target); err != nil {
			return err
		}
	}
	return make()
}

func writeFile(target string, r io.Reader) error {
	return replace(target, func() error {
		f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, r); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
}
