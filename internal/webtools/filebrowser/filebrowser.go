// Package filebrowser is the web file browser svc-gateway serves (port 8080
// in svc-general): a small page (assets/, plain HTML and JavaScript) over
// the gateway's own files endpoints, mounted here unchanged under /v1/files
// so the browser follows exactly the rules of spec/gateway-api.md: browse,
// upload, download (folders as tar.gz), rename or move, delete, mkdir.
package filebrowser

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"

	"github.com/svc-dev/svc/internal/webtools"
)

//go:embed assets
var assets embed.FS

// Handler serves the page at / and files (the gateway's FilesHandler) at
// /v1/. It does not authenticate: serve it behind webtools.Protect.
func Handler(files http.Handler) http.Handler {
	static, _ := fs.Sub(assets, "assets")
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/files/content") {
			// A file opened in the browser is shown on this tool's origin;
			// the sandbox keeps an HTML or SVG file from running scripts
			// there with the user's session.
			w.Header().Set("Content-Security-Policy", "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'")
		}
		files.ServeHTTP(w, r)
	}))
	mux.Handle("/", webtools.Static(static))
	return mux
}
