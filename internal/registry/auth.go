package registry

import (
	"crypto/sha256"
	"crypto/subtle"
	"io"
	"net/http"
	"strings"
)

// authorize lets through only requests under /v2 that carry the internal
// credential. A 401 carries a Basic challenge and the distribution API
// version header: dockerd and ggcr read both when they ping /v2/ to learn
// how to authenticate.
func (r *Registry) authorize(next http.Handler) http.Handler {
	user := sha256.Sum256([]byte(r.cred.Username))
	pass := sha256.Sum256([]byte(r.cred.Password))
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/v2" && !strings.HasPrefix(req.URL.Path, "/v2/") {
			http.NotFound(w, req)
			return
		}
		u, p, ok := req.BasicAuth()
		// Comparing fixed-size hashes keeps the time independent of where
		// the strings differ and of their lengths.
		gu, gp := sha256.Sum256([]byte(u)), sha256.Sum256([]byte(p))
		if !ok || subtle.ConstantTimeCompare(gu[:], user[:])&subtle.ConstantTimeCompare(gp[:], pass[:]) != 1 {
			h := w.Header()
			h.Set("WWW-Authenticate", `Basic realm="svc registry"`)
			h.Set("Docker-Distribution-API-Version", "registry/2.0")
			h.Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":null}]}`+"\n")
			return
		}
		next.ServeHTTP(w, req)
	})
}
