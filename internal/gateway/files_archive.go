package gateway

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// archive is GET /v1/files/archive: the directory as a .tar.gz built while
// it is sent, under one top-level folder, symlinks stored as links.
func (s *Server) archive(w http.ResponseWriter, r *http.Request) error {
	dir, err := s.dirParam(r)
	if err != nil {
		return err
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
	if err := writeArchive(r.Context(), w, root, top, s.log); err != nil {
		// Headers are sent: the truncated gzip stream tells the client.
		s.log.Warn("archive: aborted", "dir", dir, "err", err)
	}
	return nil
}

// writeArchive streams root as a tar.gz whose entries sit under top.
func writeArchive(ctx context.Context, w io.Writer, root, top string, log *slog.Logger) error {
	// Level 1: the archive is built while the client waits, so speed wins
	// over ratio.
	gz, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	tw := tar.NewWriter(gz)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			log.Warn("archive: skipped", "path", path, "err", err)
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rel, _ := filepath.Rel(root, path)
		name := top
		if rel != "." {
			name += "/" + filepath.ToSlash(rel)
		}
		return addToArchive(tw, path, name, d)
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
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
