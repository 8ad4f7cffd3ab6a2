package gateway

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// readFile is GET /v1/files/content: the file streamed from disk (with
// Range and conditional requests), typed by its extension.
func (s *Server) readFile(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	path, err := s.resolvePath("path", q.Get("path"))
	if err != nil {
		return err
	}
	disposition := q.Get("disposition")
	switch disposition {
	case "":
		disposition = "attachment"
	case "attachment", "inline":
	default:
		return invalid("disposition", "disposition must be attachment or inline")
	}
	// O_NONBLOCK so that opening a FIFO cannot hang the request; it has no
	// effect on regular files.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fileError(err, path)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fileError(err, path)
	}
	if !fi.Mode().IsRegular() {
		return invalid("path", "%s is not a regular file", path)
	}
	ctype := contentType(path)
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Disposition", contentDisposition(disposition, filepath.Base(path)))
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, "", fi.ModTime(), f)
	return nil
}

// commonTypes are types agents often produce that minimal images (no
// /etc/mime.types) would otherwise serve as octet-stream.
var commonTypes = map[string]string{
	".md": "text/markdown; charset=utf-8", ".txt": "text/plain; charset=utf-8",
	".log": "text/plain; charset=utf-8", ".csv": "text/csv; charset=utf-8",
	".yaml": "application/yaml", ".yml": "application/yaml", ".toml": "application/toml",
	".py": "text/x-python; charset=utf-8", ".sh": "text/x-shellscript; charset=utf-8",
	".ts": "text/typescript; charset=utf-8", ".zip": "application/zip",
	".gz": "application/gzip", ".tgz": "application/gzip", ".tar": "application/x-tar",
	".mp3": "audio/mpeg", ".mp4": "video/mp4", ".wav": "audio/wav",
}

// contentType is the type for path's extension; unknown is octet-stream,
// never sniffed (sniffing would read the file and guess wrong on text).
func contentType(path string) string {
	ext := strings.ToLower(filepath.Ext(path))
	if t, ok := commonTypes[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}

// contentDisposition quotes or RFC 2231-encodes name as needed.
func contentDisposition(disposition, name string) string {
	if v := mime.FormatMediaType(disposition, map[string]string{"filename": name}); v != "" {
		return v
	}
	return disposition
}

// archive is GET /v1/files/archive: the directory as a .tar.gz built while
// it is sent, under one top-level folder, symlinks stored as links.
func (s *Server) archive(w http.ResponseWriter, r *http.Request) error {
	dir, err := s.dirParam(r)
	if err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fileError(err, dir)
	}
	if !fi.IsDir() {
		return newError(http.StatusBadRequest, "not_a_directory", "%s is not a directory", dir)
	}
	// Walk the directory a symlinked path points at, under the name asked.
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fileError(err, dir)
	}
	// The folder inside keeps the directory's own name; the download name
	// follows the spec's character rule.
	top := filepath.Base(dir)
	if top == "/" {
		top = "archive"
	}
	h := w.Header()
	h.Set("Content-Type", "application/gzip")
	h.Set("Content-Disposition", contentDisposition("attachment", archiveName(top)+".tar.gz"))
	w.WriteHeader(http.StatusOK)
	// Level 1: the archive is built while the client waits, so speed wins
	// over ratio.
	gz, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	tw := tar.NewWriter(gz)
	walkErr := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			s.log.Warn("archive: skipped", "path", path, "err", err)
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if r.Context().Err() != nil {
			return r.Context().Err()
		}
		rel, _ := filepath.Rel(root, path)
		name := top
		if rel != "." {
			name += "/" + filepath.ToSlash(rel)
		}
		return addToArchive(tw, path, name, d)
	})
	if walkErr != nil {
		// Headers are sent: the truncated gzip stream tells the client.
		s.log.Warn("archive: aborted", "dir", dir, "err", walkErr)
		return nil
	}
	if err := tw.Close(); err != nil {
		return nil
	}
	gz.Close()
	return nil
}

// archiveName is the download name rule of the spec: characters outside
// A-Z a-z 0-9 . _ - and space stripped, "archive" if nothing is left.
func archiveName(base string) string {
	name := strings.Map(func(c rune) rune {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-', c == ' ':
			return c
		}
		return -1
	}, base)
	if strings.Trim(name, ". ") == "" {
		return "archive"
	}
	return name
}

// addToArchive writes one entry. Unreadable files and special files are
// skipped; a write error (the client left) stops the walk.
func addToArchive(tw *tar.Writer, path, name string, d fs.DirEntry) error {
	info, err := d.Info()
	if err != nil {
		return nil
	}
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(path)
		if err != nil {
			return nil
		}
		hdr, err := tar.FileInfoHeader(info, target)
		if err != nil {
			return nil
		}
		hdr.Name = name
		return tw.WriteHeader(hdr)
	case info.IsDir():
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return nil
		}
		hdr.Name = name + "/"
		return tw.WriteHeader(hdr)
	case info.Mode().IsRegular():
		f, err := os.Open(path)
		if err != nil {
			return nil
		}
		defer f.Close()
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return nil
		}
		hdr.Name = name
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		n, err := io.CopyN(tw, f, hdr.Size)
		if err != nil && n < hdr.Size {
			// The file shrank or failed mid-read: pad to the size already
			// announced so the archive stays readable.
			if _, werr := io.CopyN(tw, zeros{}, hdr.Size-n); werr != nil {
				return werr
			}
		}
		return nil
	}
	return nil // sockets, devices, FIFOs hold no data worth archiving
}

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
