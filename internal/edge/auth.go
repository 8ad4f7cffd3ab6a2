package edge

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/svc-dev/svc/internal/auth"
	"github.com/svc-dev/svc/internal/hostname"
	"github.com/svc-dev/svc/internal/instance"
)

// instanceTarget authenticates a request to an instance host. The order:
// X-Svc-Key, then a signed-URL token in the query, then the signed cookie.
// No valid credential is 401 whatever the host (so the answer says nothing
// about which ids exist); a valid key of another workspace is the same 404
// as an unknown instance. done is true when the answer was written (the
// redirect that turns a signed URL into a cookie).
func (e *Edge) instanceTarget(w http.ResponseWriter, r *http.Request, route hostname.Route) (t target, done bool, err error) {
	ctx := r.Context()
	ws := ""
	if key := r.Header.Get("X-Svc-Key"); key != "" {
		w, err := e.workspace(ctx, strings.TrimSpace(key))
		if err != nil {
			return t, false, err
		}
		ws = w.ID
	} else if token := r.URL.Query().Get(TokenParam); token != "" {
		exp, ok := e.signer.Verify(route.Label, token)
		if !ok {
			return t, false, errUnauthorized
		}
		if _, err := e.row(ctx, route.ID); err != nil {
			return t, false, err
		}
		e.setCookie(w, token, exp)
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			// The browser keeps the cookie and reloads the URL without the
			// token, so the token leaves the address bar and history.
			u := *r.URL
			u.RawQuery = withoutToken(r.URL.RawQuery)
			w.Header().Set("Referrer-Policy", "no-referrer")
			w.Header().Set("Cache-Control", "no-store")
			http.Redirect(w, r, u.RequestURI(), http.StatusFound)
			return t, true, nil
		}
	} else if c, cerr := r.Cookie(CookieName); cerr == nil {
		if _, ok := e.signer.Verify(route.Label, c.Value); !ok {
			return t, false, errUnauthorized
		}
	} else {
		return t, false, errUnauthorized
	}
	in, err := e.row(ctx, route.ID)
	if err != nil {
		return t, false, err
	}
	if ws != "" && in.WorkspaceID != ws {
		return t, false, errNotFound
	}
	t = target{in: in, port: route.Port, gateway: in.GatewayToken}
	if t.port == 0 {
		t.port = routePort(in)
		// A sandbox (a template without a default port and no gateway)
		// has no port to wake for: its bare URL does not wake it.
		if in.Status == instance.Sleeping && in.DefaultPort == 0 && in.AgentType == "" {
			return t, false, unavailable("the instance is sleeping and its template has no default port: wake it with start or exec, or use a port URL")
		}
	}
	return t, false, nil
}

// setCookie stores a signed-URL token as a host-only cookie (no Domain
// attribute, so it authenticates exactly the host that issued it).
func (e *Edge) setCookie(w http.ResponseWriter, token string, exp int64) {
	at := time.Unix(exp, 0)
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: token, Path: "/", Expires: at,
		MaxAge:   max(1, int(at.Sub(e.cfg.Now()).Seconds())),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: e.cfg.Secure,
	})
}

// withoutToken removes the signed-URL parameter from a raw query, leaving
// the rest byte for byte.
func withoutToken(raw string) string {
	parts := strings.Split(raw, "&")
	out := parts[:0]
	for _, p := range parts {
		name, _, _ := strings.Cut(p, "=")
		if n, err := url.QueryUnescape(name); p == "" || err == nil && n == TokenParam {
			continue
		}
		out = append(out, p)
	}
	return strings.Join(out, "&")
}

// stripCredentials removes everything that authenticates to the platform
// before a request enters an instance: the workspace key, the signed-URL
// token and cookie, and any gateway token a client made up. On instance
// hosts Authorization goes too (the platform owns auth there); on public
// hosts the application's own Authorization passes, unless it carries a
// workspace key.
func stripCredentials(h http.Header, u *url.URL, public bool) {
	h.Del("X-Svc-Key")
	h.Del("X-Svc-Gateway-Token")
	if a := h.Get("Authorization"); !public || strings.Contains(a, auth.KeyPrefix) {
		h.Del("Authorization")
	}
	if u.RawQuery != "" && strings.Contains(u.RawQuery, TokenParam) {
		u.RawQuery = withoutToken(u.RawQuery)
	}
	cookies := h.Values("Cookie")
	if len(cookies) == 0 {
		return
	}
	h.Del("Cookie")
	for _, line := range cookies {
		var keep []string
		for _, c := range strings.Split(line, ";") {
			name, _, _ := strings.Cut(strings.TrimSpace(c), "=")
			if name != CookieName && strings.TrimSpace(c) != "" {
				keep = append(keep, strings.TrimSpace(c))
			}
		}
		if len(keep) > 0 {
			h.Add("Cookie", strings.Join(keep, "; "))
		}
	}
}
