package webtools

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
)

// types are set explicitly: the system's MIME table may lack .mjs, and a
// module script served with the wrong type does not run.
var types = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".mjs":  "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".txt":  "text/plain; charset=utf-8",
}

// Static serves the files of an embedded tree: "/" is index.html, and a
// file with a precompressed name.gz next to it is sent compressed to
// clients that accept gzip. Responses carry a content hash as ETag and
// must be revalidated, so a new gateway build is picked up at once while
// an unchanged file costs a 304.
func Static(fsys fs.FS) http.Handler {
	s := &static{fsys: fsys}
	return http.HandlerFunc(s.serve)
}

type static struct {
	fsys  fs.FS
	etags sync.Map // name -> quoted ETag, computed on first use
}

func (s *static) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name == "" {
		name = "index.html"
	}
	if strings.HasSuffix(name, ".gz") {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	ctype, ok := types[path.Ext(name)]
	if !ok {
		ctype = "application/octet-stream"
	}
	h.Set("Content-Type", ctype)
	h.Set("Cache-Control", "no-cache")
	h.Add("Vary", "Accept-Encoding")
	sent := name
	if acceptsGzip(r) {
		if _, err := fs.Stat(s.fsys, name+".gz"); err == nil {
			sent = name + ".gz"
			h.Set("Content-Encoding", "gzip")
		}
	}
	f, err := s.fsys.Open(sent)
	if err != nil {
		h.Del("Content-Encoding")
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.IsDir() {
		h.Del("Content-Encoding")
		http.NotFound(w, r)
		return
	}
	// Embedded files seek, so they are sent from the binary's data without
	// a copy per request; any other fs.FS is read into memory.
	content, ok := f.(io.ReadSeeker)
	if !ok {
		data, err := io.ReadAll(f)
		if err != nil {
			http.Error(w, "cannot read "+name, http.StatusInternalServerError)
			return
		}
		content = bytes.NewReader(data)
	}
	tag, err := s.etag(sent, content)
	if err != nil {
		http.Error(w, "cannot read "+name, http.StatusInternalServerError)
		return
	}
	h.Set("ETag", tag)
	// The zero time keeps Last-Modified out: embedded files have none.
	http.ServeContent(w, r, "", time.Time{}, content)
}

// etag is the quoted content hash of name, computed once.
func (s *static) etag(name string, content io.ReadSeeker) (string, error) {
	if v, ok := s.etags.Load(name); ok {
		return v.(string), nil
	}
	sum := sha256.New()
	if _, err := io.Copy(sum, content); err != nil {
		return "", err
	}
	if _, err := content.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	tag := `"` + hex.EncodeToString(sum.Sum(nil)[:12]) + `"`
	s.etags.Store(name, tag)
	return tag, nil
}

// acceptsGzip is a plain reading of Accept-Encoding: gzip listed and not
// refused with q=0.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			q := strings.ReplaceAll(params, " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}
