package filebrowser

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/svc-dev/svc/internal/gateway"
	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/webtools"
	"github.com/svc-dev/svc/internal/webtools/browsertest"
)

const token = "files-token"

// start serves the file browser over a real gateway's files endpoints, as
// svc-gateway wires it, and returns its URL and the home directory.
func start(t *testing.T) (string, string) {
	t.Helper()
	home := t.TempDir()
	cfg := gateway.DefaultConfig()
	cfg.Home = home
	cfg.Workspace = home
	gw, err := gateway.New(cfg, gateway.Registry{Default: harness.GeneralA}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	return browsertest.Serve(t, webtools.Protect(token, Handler(gw.FilesHandler()))), home
}

// client calls the file browser's API the way its page does.
type client struct {
	t    *testing.T
	base string
}

func (c client) do(method, path string, body io.Reader, header map[string]string) (*http.Response, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set(gateway.TokenHeader, token)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func (c client) json(method, path string, body io.Reader, want int) map[string]any {
	c.t.Helper()
	resp, b := c.do(method, path, body, nil)
	if resp.StatusCode != want {
		c.t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, b, want)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		c.t.Fatalf("%s %s: %v: %s", method, path, err, b)
	}
	return out
}

func q(path string) string { return url.QueryEscape(path) }

func names(listing map[string]any) []string {
	var out []string
	for _, e := range listing["entries"].([]any) {
		out = append(out, e.(map[string]any)["name"].(string))
	}
	return out
}

// TestAPI walks through every call the page makes: the gateway's files
// endpoints with their rules, served on the file browser's listener.
func TestAPI(t *testing.T) {
	base, home := start(t)
	c := client{t, base}

	resp, page := c.do("GET", "/", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(page), `src="files.js"`) {
		t.Fatalf("page: %d %s", resp.StatusCode, page)
	}

	// Upload, never clobbering unless asked.
	c.json("PUT", "/v1/files/content?overwrite=false&path="+q("~/docs/a.txt"), strings.NewReader("one"), 200)
	e := c.json("PUT", "/v1/files/content?overwrite=false&path="+q("~/docs/a.txt"), strings.NewReader("two"), 409)
	if e["error"].(map[string]any)["code"] != "file_exists" {
		t.Fatalf("second upload: %v", e)
	}
	c.json("PUT", "/v1/files/content?overwrite=true&path="+q("~/docs/a.txt"), strings.NewReader("two"), 200)

	// Listing starts at ~, which the gateway resolves.
	l := c.json("GET", "/v1/files?path=~", nil, 200)
	if l["path"] != home || !slices.Equal(names(l), []string{"docs"}) {
		t.Fatalf("home listing: %v", l)
	}
	c.json("POST", "/v1/files/dir?path="+q(filepath.Join(home, "docs", "new folder")), nil, 200)
	moved := c.json("PATCH", "/v1/files", strings.NewReader(`{"from":"~/docs/a.txt","to":"~/docs/new folder"}`), 200)
	if moved["path"] != filepath.Join(home, "docs", "new folder", "a.txt") {
		t.Fatalf("move into a folder: %v", moved)
	}
	c.json("PATCH", "/v1/files", strings.NewReader(`{"from":"~/docs/new folder/a.txt","to":"~/docs/new folder/b.txt"}`), 200)

	// Download a file (inline views are sandboxed) and a folder.
	resp, body := c.do("GET", "/v1/files/content?disposition=inline&path="+q("~/docs/new folder/b.txt"), nil, nil)
	if resp.StatusCode != 200 || string(body) != "two" || !strings.HasPrefix(resp.Header.Get("Content-Security-Policy"), "sandbox") ||
		!strings.HasPrefix(resp.Header.Get("Content-Disposition"), "inline") {
		t.Fatalf("inline file: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	resp, body = c.do("GET", "/v1/files/archive?path="+q("~/docs"), nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Disposition"), "docs.tar.gz") {
		t.Fatalf("archive: %d %v", resp.StatusCode, resp.Header)
	}
	if got := tarNames(t, body); !slices.Equal(got, []string{"docs/", "docs/new folder/", "docs/new folder/b.txt"}) {
		t.Fatalf("archive holds %v", got)
	}

	// Delete, then the gateway's errors come through unchanged.
	c.json("DELETE", "/v1/files?path="+q("~/docs/new folder"), nil, 200)
	if _, err := os.Stat(filepath.Join(home, "docs", "new folder")); !os.IsNotExist(err) {
		t.Fatalf("folder still there: %v", err)
	}
	e = c.json("GET", "/v1/files?path="+q("~/nope"), nil, 404)
	if e["error"].(map[string]any)["code"] != "file_not_found" {
		t.Fatalf("missing folder: %v", e)
	}
	e = c.json("GET", "/v1/files?path=relative", nil, 400)
	if e["error"].(map[string]any)["code"] != "validation_error" {
		t.Fatalf("relative path: %v", e)
	}
	// Only the files endpoints are on this listener.
	c.json("GET", "/v1/health", nil, 404)
}

func TestAccess(t *testing.T) {
	base, home := start(t)
	for _, h := range []map[string]string{{gateway.TokenHeader: ""}, {gateway.TokenHeader: "wrong"}} {
		for _, p := range []string{"/", "/v1/files?path=~"} {
			req, _ := http.NewRequest("GET", base+p, nil)
			for k, v := range h {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 401 {
				t.Errorf("%s with token %q: %d", p, h[gateway.TokenHeader], resp.StatusCode)
			}
		}
	}
	// A page elsewhere posting through the user's authenticated browser.
	c := client{t, base}
	resp, _ := c.do("POST", "/v1/files/dir?path="+q("~/evil"), nil, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"})
	if resp.StatusCode != 403 {
		t.Fatalf("cross-site mkdir: %d", resp.StatusCode)
	}
	if _, err := os.Stat(filepath.Join(home, "evil")); !os.IsNotExist(err) {
		t.Fatal("a cross-site request created a folder")
	}
}

func tarNames(t *testing.T, body []byte) []string {
	t.Helper()
	zr, err := gzip.NewReader(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var out []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h.Name)
	}
}
