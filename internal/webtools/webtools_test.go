package webtools

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/svc-dev/svc/internal/gateway"
)

func gz(t *testing.T, s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func TestStatic(t *testing.T) {
	fsys := fstest.MapFS{
		"index.html":      {Data: []byte("<p>hi</p>")},
		"app.mjs":         {Data: []byte("export const x = 1;")},
		"app.mjs.gz":      {Data: gz(t, "export const x = 1;")},
		"vendor/LICENSE":  {Data: []byte("MIT")},
		"vendor/lib.css":  {Data: []byte("p{}")},
		"vendor/lib.css~": {Data: []byte("backup")},
	}
	srv := httptest.NewServer(Static(fsys))
	defer srv.Close()
	// The transport must not add Accept-Encoding itself.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	get := func(path string, h map[string]string) (*http.Response, string) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	resp, body := get("/", nil)
	if resp.StatusCode != 200 || body != "<p>hi</p>" || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("index: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	resp, body = get("/app.mjs", nil)
	if body != "export const x = 1;" || resp.Header.Get("Content-Encoding") != "" || resp.Header.Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Fatalf("plain module: %q %v", body, resp.Header)
	}
	resp, body = get("/app.mjs", map[string]string{"Accept-Encoding": "br, gzip;q=0.8"})
	if resp.Header.Get("Content-Encoding") != "gzip" || body != string(gz(t, "export const x = 1;")) {
		t.Fatalf("gzip module: %v", resp.Header)
	}
	tag := resp.Header.Get("ETag")
	resp, _ = get("/app.mjs", map[string]string{"Accept-Encoding": "gzip", "If-None-Match": tag})
	if tag == "" || resp.StatusCode != http.StatusNotModified {
		t.Fatalf("revalidation with %q: %d", tag, resp.StatusCode)
	}
	resp, body = get("/app.mjs", map[string]string{"Accept-Encoding": "gzip;q=0"})
	if resp.Header.Get("Content-Encoding") != "" || body != "export const x = 1;" {
		t.Fatalf("gzip refused: %v", resp.Header)
	}
	if resp, _ = get("/vendor/lib.css", map[string]string{"Accept-Encoding": "gzip"}); resp.Header.Get("Content-Encoding") != "" || resp.Header.Get("Content-Type") != "text/css; charset=utf-8" {
		t.Fatalf("css without a .gz: %v", resp.Header)
	}
	for _, p := range []string{"/app.mjs.gz", "/missing.js", "/../index.html/x", "/vendor", "/vendor/"} {
		if resp, _ := get(p, nil); resp.StatusCode != 404 {
			t.Errorf("%s: %d, want 404", p, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest("POST", srv.URL+"/", nil)
	if resp, err := client.Do(req); err != nil || resp.StatusCode != 405 {
		t.Fatalf("POST: %v %v", resp, err)
	}
}

func TestSameOrigin(t *testing.T) {
	cases := []struct {
		name   string
		host   string
		header map[string]string
		want   bool
	}{
		{"program (no browser headers)", "a.example", nil, true},
		{"same-origin fetch", "a.example", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://a.example"}, true},
		{"typed into the address bar", "a.example", map[string]string{"Sec-Fetch-Site": "none"}, true},
		{"cross-site", "a.example", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://a.example"}, false},
		{"same-site sibling", "a.example", map[string]string{"Sec-Fetch-Site": "same-site"}, false},
		{"origin matches host", "a.example:8080", map[string]string{"Origin": "http://a.example:8080"}, true},
		{"default port", "a.example", map[string]string{"Origin": "https://a.example:443"}, true},
		{"origin differs", "a.example", map[string]string{"Origin": "http://b.example"}, false},
		{"proxy rewrote Host", "10.0.0.5:7681", map[string]string{"Origin": "https://i1-7681.apps.example", "X-Forwarded-Host": "i1-7681.apps.example"}, true},
		{"proxy, other origin", "10.0.0.5:7681", map[string]string{"Origin": "https://evil.example", "X-Forwarded-Host": "i1-7681.apps.example"}, false},
		{"opaque origin", "a.example", map[string]string{"Origin": "null"}, false},
	}
	for _, tc := range cases {
		r := httptest.NewRequest("GET", "/ws", nil)
		r.Host = tc.host
		for k, v := range tc.header {
			r.Header.Set(k, v)
		}
		if got := SameOrigin(r); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestProtect(t *testing.T) {
	hit := 0
	h := Protect("tok", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit++ }))
	srv := httptest.NewServer(h)
	defer srv.Close()
	do := func(method string, header map[string]string) *http.Response {
		req, _ := http.NewRequest(method, srv.URL+"/x", nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := do("GET", nil); resp.StatusCode != 401 || hit != 0 {
		t.Fatalf("no token: %d", resp.StatusCode)
	}
	if resp := do("GET", map[string]string{gateway.TokenHeader: "tok"}); resp.StatusCode != 200 || hit != 1 ||
		resp.Header.Get("Content-Security-Policy") == "" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("token: %d %v", resp.StatusCode, resp.Header)
	}
	// A form on another site posting with the user's cookie: the edge
	// would add the token, the tool must still refuse.
	if resp := do("POST", map[string]string{gateway.TokenHeader: "tok", "Sec-Fetch-Site": "cross-site"}); resp.StatusCode != 403 || hit != 1 {
		t.Fatalf("cross-site POST: %d", resp.StatusCode)
	}
	if resp := do("DELETE", map[string]string{gateway.TokenHeader: "tok", "Sec-Fetch-Site": "same-origin"}); resp.StatusCode != 200 || hit != 2 {
		t.Fatalf("same-origin DELETE: %d", resp.StatusCode)
	}

	// Without a token only loopback is served; httptest's client is on
	// loopback, so check a foreign address directly.
	open := Protect("", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.1.2.3:5555"
	w := httptest.NewRecorder()
	open.ServeHTTP(w, r)
	if w.Code != 403 {
		t.Fatalf("no token, remote client: %d", w.Code)
	}
	r.RemoteAddr = "127.0.0.1:5555"
	w = httptest.NewRecorder()
	open.ServeHTTP(w, r)
	if w.Code != 200 {
		t.Fatalf("no token, loopback client: %d", w.Code)
	}
}

func TestHandle(t *testing.T) {
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	cases := []struct {
		name   string
		h      HandlerFunc
		status int
		body   string
	}{
		{"client error", func(w http.ResponseWriter, r *http.Request) error {
			return Errorf(http.StatusForbidden, "no %s", "way")
		}, 403, `{"error":"no way"}` + "\n"},
		{"internal error", func(w http.ResponseWriter, r *http.Request) error {
			return errors.New("disk on fire")
		}, 500, `{"error":"internal error"}` + "\n"},
		{"error after writing", func(w http.ResponseWriter, r *http.Request) error {
			w.WriteHeader(201)
			w.Write([]byte("partial"))
			return errors.New("cut short")
		}, 201, "partial"},
		{"success", func(w http.ResponseWriter, r *http.Request) error {
			w.Write([]byte("ok"))
			return nil
		}, 200, "ok"},
	}
	for _, c := range cases {
		w := httptest.NewRecorder()
		Handle(log, c.h).ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		if w.Code != c.status || w.Body.String() != c.body {
			t.Errorf("%s: %d %q, want %d %q", c.name, w.Code, w.Body.String(), c.status, c.body)
		}
	}
	// The detail of internal errors is logged, never sent.
	if !strings.Contains(logged.String(), "disk on fire") || !strings.Contains(logged.String(), "cut short") {
		t.Errorf("log: %s", logged.String())
	}
}
