package gateway

import (
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
