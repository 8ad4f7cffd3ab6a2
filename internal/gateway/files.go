package gateway

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// File calls reach the instance filesystem by absolute or ~/ path; they are
// not jailed, because the key is the instance root (spec: Files).

// fileEntry is the spec's FileEntry.
type fileEntry struct {
	Name     string `json:"name"`
	Path     string `json:"path"`
	Type     string `json:"type"`
	Size     *int64 `json:"size"`
	Modified int64  `json:"modified"`
	Hidden   bool   `json:"hidden"`
}

func entryOf(path string, fi fs.FileInfo) fileEntry {
	name := filepath.Base(path)
	e := fileEntry{Name: name, Path: path, Modified: fi.ModTime().UnixMilli(), Hidden: strings.HasPrefix(name, ".")}
	switch m := fi.Mode(); {
	case m.IsDir():
		e.Type = "directory"
	case m.IsRegular():
		e.Type = "file"
	case m&fs.ModeSymlink != 0:
		e.Type = "symlink"
	default:
		e.Type = "other"
	}
	if e.Type != "directory" {
		size := fi.Size()
		e.Size = &size
	}
	return e
}

// resolvePath turns a request path into a clean absolute path: "~" is the
// agent's home, anything else must be absolute.
func (s *Server) resolvePath(param, p string) (string, error) {
	switch {
	case p == "":
		return "", invalid(param, "%s is required", param)
	case strings.ContainsRune(p, 0):
		return "", invalid(param, "%s must not contain NUL", param)
	case p == "~":
		p = s.cfg.Home
	case strings.HasPrefix(p, "~/"):
		p = filepath.Join(s.cfg.Home, p[2:])
	case !filepath.IsAbs(p):
		return "", invalid(param, "%s must be absolute or start with ~/", param)
	}
	return filepath.Clean(p), nil
}

// dirParam is the optional path of a listing or archive (the workspace
// when omitted), which must be an existing directory.
func (s *Server) dirParam(r *http.Request) (string, error) {
	p := r.URL.Query().Get("path")
	if p == "" {
		p = s.cfg.Workspace
	}
	dir, err := s.resolvePath("path", p)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fileError(err, dir)
	}
	if !fi.IsDir() {
		return "", newError(http.StatusBadRequest, "not_a_directory", "%s is not a directory", dir)
	}
	return dir, nil
}

// fileError maps a filesystem error on path to the client's code. The
// message names the path, never the syscall.
func fileError(err error, path string) error {
	if err == nil {
		return nil
	}
	var errno syscall.Errno
	errors.As(err, &errno)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return newError(http.StatusNotFound, "file_not_found", "no file or directory at %s", path)
	case errno == syscall.ENOTDIR:
		return newError(http.StatusBadRequest, "not_a_directory", "a component of %s is not a directory", path)
	case errors.Is(err, fs.ErrPermission), errno == syscall.EROFS:
		return &Error{Status: http.StatusForbidden, Code: "permission_denied", Message: "permission denied: " + path, Cause: err}
	case errno == syscall.ENOSPC, errno == syscall.EDQUOT:
		return &Error{Status: http.StatusInsufficientStorage, Code: "no_space", Message: "no space left for " + path, Cause: err}
	case errno == syscall.EISDIR:
		return invalid("path", "%s is a directory", path)
	case errno == syscall.EEXIST, errno == syscall.ENOTEMPTY:
		return newError(http.StatusConflict, "file_exists", "%s exists", path)
	case errno == syscall.ENAMETOOLONG, errno == syscall.EINVAL, errno == syscall.ELOOP:
		return &Error{Status: http.StatusBadRequest, Code: "validation_error", Param: "path", Message: "invalid path " + path, Cause: err}
	}
	return err
}
