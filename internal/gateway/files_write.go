package gateway

import (
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// writeFile is PUT /v1/files/content: the raw body becomes the file.
func (s *Server) writeFile(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	path, err := s.resolvePath("path", q.Get("path"))
	if err != nil {
		return err
	}
	opt := putOptions{overwrite: true}
	if v := q.Get("overwrite"); v != "" {
		if opt.overwrite, err = strconv.ParseBool(v); err != nil {
			return invalid("overwrite", "overwrite must be true or false")
		}
	}
	if v := r.Header.Get("X-Expected-Mtime"); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return invalid("X-Expected-Mtime", "X-Expected-Mtime must be epoch milliseconds")
		}
		opt.expectedMtime = &ms
	}
	entry, err := putFile(path, r.Body, opt)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, entry)
}

type putOptions struct {
	overwrite     bool
	expectedMtime *int64 // epoch ms the existing file must have
}

// putFile writes body to path through a temporary file in the same
// directory renamed over the target, so readers never see a partial file
// and a failed upload leaves the old file intact.
func putFile(path string, body io.Reader, opt putOptions) (fileEntry, error) {
	// Write through a symlink to the file it names, as editors do; a
	// dangling link is replaced.
	target := path
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if resolved, err := filepath.EvalSymlinks(path); err == nil {
			target = resolved
		}
	}
	old, err := os.Stat(target)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fileEntry{}, fileError(err, path)
	}
	if err := checkWrite(old, exists, opt, path); err != nil {
		return fileEntry{}, err
	}

	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fileEntry{}, fileError(err, dir)
	}
	tmp, err := os.CreateTemp(dir, ".svc-upload-*")
	if err != nil {
		return fileEntry{}, fileError(err, dir)
	}
	placed := false
	defer func() {
		if !placed {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	mode := fs.FileMode(0o644)
	if exists {
		mode = old.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		if st, ok := old.Sys().(*syscall.Stat_t); ok {
			tmp.Chown(int(st.Uid), int(st.Gid)) // best effort: keep the owner
		}
	}
	if err := tmp.Chmod(mode); err != nil {
		return fileEntry{}, fileError(err, path)
	}
	src := &readTracker{r: body}
	buf := copyBuffers.Get().(*[]byte)
	// The struct hides tmp's ReadFrom, whose generic path would copy in
	// 32 KB steps; larger steps roughly double upload throughput.
	_, err = io.CopyBuffer(struct{ io.Writer }{tmp}, src, *buf)
	copyBuffers.Put(buf)
	if err != nil {
		if src.err != nil {
			return fileEntry{}, invalid("body", "upload interrupted: %v", src.err)
		}
		return fileEntry{}, fileError(err, path)
	}
	if err := tmp.Close(); err != nil {
		return fileEntry{}, fileError(err, path)
	}

	// Re-check what the upload raced with, then put the file in place.
	if exists && opt.expectedMtime != nil {
		if now, err := os.Stat(target); err == nil && now.ModTime().UnixMilli() != *opt.expectedMtime {
			return fileEntry{}, modified(path, now)
		}
	}
	if opt.overwrite {
		err = os.Rename(tmp.Name(), target)
	} else if err = os.Link(tmp.Name(), target); err == nil {
		// Link fails if the target appeared meanwhile: no clobbering.
		os.Remove(tmp.Name())
	}
	if err != nil {
		return fileEntry{}, fileError(err, path)
	}
	placed = true
	fi, err := os.Lstat(target)
	if err != nil {
		return fileEntry{}, fileError(err, path)
	}
	return entryOf(target, fi), nil
}

// checkWrite applies the write preconditions to the existing file.
func checkWrite(old fs.FileInfo, exists bool, opt putOptions, path string) error {
	if !exists {
		return nil
	}
	if old.IsDir() {
		return invalid("path", "%s is a directory", path)
	}
	if !old.Mode().IsRegular() {
		return invalid("path", "%s is not a regular file", path)
	}
	if !opt.overwrite {
		return newError(http.StatusConflict, "file_exists", "%s exists and overwrite is false", path)
	}
	if opt.expectedMtime != nil && old.ModTime().UnixMilli() != *opt.expectedMtime {
		return modified(path, old)
	}
	return nil
}

func modified(path string, fi fs.FileInfo) *Error {
	return &Error{Status: http.StatusPreconditionFailed, Code: "modified",
		Message: "the file changed: modified is " + strconv.FormatInt(fi.ModTime().UnixMilli(), 10),
		Hint:    "read " + path + " again, then write with its current modified"}
}

var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// readTracker tells a failed upload (read error) from a failed disk
// (write error).
type readTracker struct {
	r   io.Reader
	err error
}

func (t *readTracker) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF {
		t.err = err
	}
	return n, err
}

// deleteFile is DELETE /v1/files: rm -rf; a symlink is removed itself.
func (s *Server) deleteFile(w http.ResponseWriter, r *http.Request) error {
	path, err := s.resolvePath("path", r.URL.Query().Get("path"))
	if err != nil {
		return err
	}
	if path == "/" {
		return invalid("path", "refusing to delete /")
	}
	if err := os.RemoveAll(path); err != nil {
		return fileError(err, path)
	}
	return writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

// makeDir is POST /v1/files/dir: mkdir -p, returning the directory.
func (s *Server) makeDir(w http.ResponseWriter, r *http.Request) error {
	path, err := s.resolvePath("path", r.URL.Query().Get("path"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		if fi, serr := os.Stat(path); serr == nil && !fi.IsDir() {
			return newError(http.StatusConflict, "file_exists", "%s exists and is not a directory", path)
		}
		return fileError(err, path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fileError(err, path)
	}
	return writeJSON(w, http.StatusOK, entryOf(path, fi))
}
