// Package webtools holds what the browser tools svc-gateway can serve share:
// the web terminal (webtools/terminal), the file browser
// (webtools/filebrowser) and the instance dashboard (webtools/dashboard).
// Each runs on its own listener behind the gateway's token check; browsers
// reach them through the platform's edge, so pages use relative URLs only.
package webtools

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/svc-dev/svc/internal/gateway"
)

// Protect puts h behind what every web tool listener requires: the
// gateway's token check (the edge adds the token to requests it
// authenticated; loopback only when no token is configured), a refusal of
// cross-origin state-changing requests (a page elsewhere cannot make a
// logged-in browser delete files), and headers that keep the tools' pages
// out of other sites' frames.
func Protect(token string, h http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	inner := cop.Handler(h)
	return gateway.Authenticate(token, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "same-origin")
		// The terminal's renderer writes <style> elements, hence
		// 'unsafe-inline' for styles only; scripts come from the page's
		// own origin.
		hd.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'self'")
		inner.ServeHTTP(w, r)
	}))
}

// SameOrigin reports whether a request that changes nothing by itself but
// opens a channel that does (the terminal's WebSocket handshake, a GET)
// comes from a page of the same origin. Browsers send Sec-Fetch-Site; for
// those that do not, Origin is compared with the host the browser used
// (X-Forwarded-Host when a proxy rewrote Host). Requests with neither
// header come from programs, not from pages, and pass.
func SameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return true
	case "":
	default:
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	for _, h := range []string{r.Host, firstValue(r.Header.Get("X-Forwarded-Host"))} {
		if h != "" && strings.EqualFold(stripDefaultPort(u.Host, u.Scheme), stripDefaultPort(h, u.Scheme)) {
			return true
		}
	}
	return false
}

func firstValue(list string) string {
	v, _, _ := strings.Cut(list, ",")
	return strings.TrimSpace(v)
}

// stripDefaultPort drops :80 for http(s) and ws origins, :443 for https,
// so "host" and "host:443" compare equal.
func stripDefaultPort(hostport, scheme string) string {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return hostport
	}
	if (port == "80" && (scheme == "http" || scheme == "ws")) || (port == "443" && (scheme == "https" || scheme == "wss")) {
		return host
	}
	return hostport
}
