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

// writeFile is PUT /v1/files/content: the raw body becomes the file. It is
// written to a temporary file in the same directory and renamed over the
// target, so a failed upload leaves the old file intact.
func (s *Server) writeFile(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	path, err := s.resolvePath("path", q.Get("path"))
	if err != nil {
		return err
	}
	overwrite := true
	if v := q.Get("overwrite"); v != "" {
		if overwrite, err = strconv.ParseBool(v); err != nil {
			return invalid("overwrite", "overwrite must be true or false")
		}
	}
	var expected *int64
	if v := r.Header.Get("X-Expected-Mtime"); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return invalid("X-Expected-Mtime", "X-Expected-Mtime must be epoch milliseconds")
		}
		expected = &ms
	}

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
		return fileError(err, path)
	}
	if err := checkWrite(old, exists, overwrite, expected, path); err != nil {
		return err
	}

	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fileError(err, dir)
	}
	tmp, err := os.CreateTemp(dir, ".svc-upload-*")
	if err != nil {
		return fileError(err, dir)
	}
	done := false
	defer func() {
		if !done {
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
		return fileError(err, path)
	}
	body := &readTracker{r: r.Body}
	buf := copyBuffers.Get().(*[]byte)
	// The struct hides tmp's ReadFrom, whose generic path would copy in
	// 32 KB steps; larger steps roughly double upload throughput.
	_, err = io.CopyBuffer(struct{ io.Writer }{tmp}, body, *buf)
	copyBuffers.Put(buf)
	if err != nil {
		if body.err != nil {
			return invalid("body", "upload interrupted: %v", body.err)
		}
		return fileError(err, path)
	}
	if err := tmp.Close(); err != nil {
		return fileError(err, path)
	}

	// Re-check what the upload raced with, then put the file in place.
	if exists && expected != nil {
		if now, err := os.Stat(target); err == nil && now.ModTime().UnixMilli() != *expected {
			return modified(path, now)
		}
	}
	if overwrite {
		err = os.Rename(tmp.Name(), target)
	} else if err = os.Link(tmp.Name(), target); err == nil {
		// Link fails if the target appeared meanwhile: no clobbering.
		os.Remove(tmp.Name())
	}
	if err != nil {
		return fileError(err, path)
	}
	done = true
	fi, err := os.Lstat(target)
	if err != nil {
		return fileError(err, path)
	}
	return writeJSON(w, http.StatusOK, entryOf(target, fi))
}

// checkWrite applies the write preconditions to the existing file.
func checkWrite(old fs.FileInfo, exists, overwrite bool, expected *int64, path string) error {
	if !exists {
		return nil
	}
	if old.IsDir() {
		return invalid("path", "%s is a directory", path)
	}
	if !old.Mode().IsRegular() {
		return invalid("path", "%s is not a regular file", path)
	}
	if !overwrite {
		return newError(http.StatusConflict, "file_exists", "%s exists and overwrite is false", path)
	}
	if expected != nil && old.ModTime().UnixMilli() != *expected {
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
