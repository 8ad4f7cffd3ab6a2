package gateway

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// moveRequest is the PATCH /v1/files body; other fields are ignored.
type moveRequest struct {
	From, To string
}

func parseMoveRequest(body []byte) (moveRequest, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return moveRequest{}, invalid("", "request body must be a JSON object")
	}
	var req moveRequest
	for _, f := range []struct {
		name string
		dst  *string
	}{{"from", &req.From}, {"to", &req.To}} {
		raw, ok := fields[f.name]
		if !ok || json.Unmarshal(raw, f.dst) != nil || *f.dst == "" {
			return moveRequest{}, invalid(f.name, "%s is required and must be a non-empty string", f.name)
		}
	}
	return req, nil
}

// moveFile is PATCH /v1/files: a rename with mv's rules.
func (s *Server) moveFile(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxSmallBody))
	if err != nil {
		return err
	}
	req, err := parseMoveRequest(body)
	if err != nil {
		return err
	}
	from, err := s.resolvePath("from", req.From)
	if err != nil {
		return err
	}
	to, err := s.resolvePath("to", req.To)
	if err != nil {
		return err
	}
	dest, err := move(from, to)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(dest)
	if err != nil {
		return fileError(err, dest)
	}
	return writeJSON(w, http.StatusOK, entryOf(dest, fi))
}

// move renames from to to like mv: into to when it is a directory, over an
// existing file, never a directory over a file or the reverse, and by copy
// and remove across filesystems. It returns the new path.
func move(from, to string) (string, error) {
	src, err := os.Lstat(from)
	if err != nil {
		return "", fileError(err, from)
	}
	dest := to
	if fi, err := os.Stat(to); err == nil && fi.IsDir() && !(src.IsDir() && os.SameFile(src, fi)) {
		dest = filepath.Join(to, filepath.Base(from))
	}
	if dfi, err := os.Lstat(dest); err == nil {
		switch {
		case os.SameFile(src, dfi):
			return "", invalid("to", "%s and %s are the same file", from, dest)
		case src.IsDir() && !dfi.IsDir():
			return "", newError(http.StatusConflict, "file_exists", "cannot overwrite non-directory %s with a directory", dest)
		case !src.IsDir() && dfi.IsDir():
			return "", newError(http.StatusConflict, "file_exists", "cannot overwrite directory %s with a non-directory", dest)
		}
	}
	if src.IsDir() && strings.HasPrefix(dest+"/", from+"/") {
		return "", invalid("to", "cannot move %s into itself", from)
	}
	err = os.Rename(from, dest)
	if errors.Is(err, syscall.EXDEV) {
		err = moveAcross(from, dest, src)
	}
	if err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) && (errno == syscall.ENOTEMPTY || errno == syscall.EEXIST) {
			return "", newError(http.StatusConflict, "file_exists", "directory %s is not empty", dest)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return "", newError(http.StatusNotFound, "file_not_found", "no directory %s to move into", filepath.Dir(dest))
		}
		return "", fileError(err, dest)
	}
	return dest, nil
}

// moveAcross copies the tree next to dest, renames it into place (so dest
// is never half-written) and removes the source, as mv does between
// filesystems.
func moveAcross(from, dest string, src fs.FileInfo) error {
	tmp := filepath.Join(filepath.Dir(dest), ".svc-move-"+randomID()[:12])
	if err := copyTree(from, tmp); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, dest); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	return os.RemoveAll(from)
}

// copyTree copies regular files, directories and symlinks with their
// modes, owners and times; sockets, devices and FIFOs hold no data and
// are not copied.
func copyTree(src, dst string) error {
	type dirAttr struct {
		path string
		info fs.FileInfo
	}
	var dirs []dirAttr
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		out := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case info.IsDir():
			// Writable while filling it; its own mode and time are set
			// once its contents are in.
			if err := os.Mkdir(out, 0o700); err != nil {
				return err
			}
			dirs = append(dirs, dirAttr{out, info})
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, out); err != nil {
				return err
			}
		case info.Mode().IsRegular():
			if err := copyFile(path, out, info.Mode()); err != nil {
				return err
			}
			os.Chtimes(out, info.ModTime(), info.ModTime())
		default:
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			os.Lchown(out, int(st.Uid), int(st.Gid)) // best effort
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Chmod(dirs[i].path, dirs[i].info.Mode()&(fs.ModePerm|fs.ModeSetgid|fs.ModeSticky))
		os.Chtimes(dirs[i].path, dirs[i].info.ModTime(), dirs[i].info.ModTime())
	}
	return err
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode.Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
