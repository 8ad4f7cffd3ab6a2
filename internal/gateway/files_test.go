package gateway

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func q(p string) string { return url.QueryEscape(p) }

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestListFiles(t *testing.T) {
	e := newEnv(t, testConfig(t))
	dir := filepath.Join(e.home, "list")
	for _, d := range []string{"b", "A", "ñandú"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	mustWrite(t, filepath.Join(dir, "c.txt"), "ccc")
	mustWrite(t, filepath.Join(dir, ".hidden"), "")
	mustWrite(t, filepath.Join(dir, "B.md"), "bb")
	os.Symlink("c.txt", filepath.Join(dir, "link"))
	os.Symlink("b", filepath.Join(dir, "dirlink"))
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2024, 5, 6, 7, 8, 9, 123_000_000, time.UTC)
	os.Chtimes(filepath.Join(dir, "c.txt"), mtime, mtime)

	status, body := e.Call("GET", "/v1/files?path="+q(dir), nil)
	if status != 200 {
		t.Fatalf("%d %v", status, body)
	}
	type row struct{ Name, Type string }
	var got []row
	for _, x := range body["entries"].([]any) {
		m := x.(map[string]any)
		got = append(got, row{m["name"].(string), m["type"].(string)})
		if m["path"] != filepath.Join(dir, m["name"].(string)) || m["hidden"] != strings.HasPrefix(m["name"].(string), ".") {
			t.Fatalf("entry %v", m)
		}
		if (m["size"] == nil) != (m["type"] == "directory") {
			t.Fatalf("size of %v", m)
		}
	}
	want := []row{{"A", "directory"}, {"b", "directory"}, {"ñandú", "directory"},
		{".hidden", "file"}, {"B.md", "file"}, {"c.txt", "file"}, {"dirlink", "symlink"}, {"link", "symlink"}, {"pipe", "other"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("listing order (-want +got):\n%s", d)
	}
	c := body["entries"].([]any)[5].(map[string]any)
	if c["size"] != 3.0 || c["modified"] != float64(mtime.UnixMilli()) {
		t.Fatalf("c.txt %v", c)
	}
	if body["path"] != dir || body["parentPath"] != e.home || body["truncated"] != false {
		t.Fatalf("listing %v", body)
	}

	// ~ forms, the default workspace, the root.
	_, home := e.Call("GET", "/v1/files?path=~", nil)
	if home["path"] != e.home {
		t.Fatalf("~: %v", home["path"])
	}
	_, sub := e.Call("GET", "/v1/files?path="+q("~/list/b"), nil)
	if sub["path"] != filepath.Join(dir, "b") || len(sub["entries"].([]any)) != 0 {
		t.Fatalf("~/list/b: %v", sub)
	}
	os.MkdirAll(filepath.Join(e.home, ".svc-gateway/workspace"), 0o755)
	_, ws := e.Call("GET", "/v1/files", nil)
	if ws["path"] != filepath.Join(e.home, ".svc-gateway/workspace") {
		t.Fatalf("default: %v", ws["path"])
	}
	_, root := e.Call("GET", "/v1/files?path=/", nil)
	if root["path"] != "/" || root["parentPath"] != nil {
		t.Fatalf("root: %v %v", root["path"], root["parentPath"])
	}
	// Through a symlink to a directory.
	_, viaLink := e.Call("GET", "/v1/files?path="+q(filepath.Join(dir, "dirlink")), nil)
	if viaLink["path"] != filepath.Join(dir, "dirlink") {
		t.Fatalf("via link %v", viaLink)
	}

	for _, c := range []struct {
		path, code string
		status     int
	}{
		{filepath.Join(dir, "c.txt"), "not_a_directory", 400},
		{filepath.Join(dir, "nope"), "file_not_found", 404},
		{"relative/dir", "validation_error", 400},
		{"~user/x", "validation_error", 400},
	} {
		status, body := e.Call("GET", "/v1/files?path="+q(c.path), nil)
		param := ""
		if c.code == "validation_error" {
			param = "path"
		}
		wantError(t, status, body, c.status, c.code, param)
	}
}

func TestListTruncatesAfterSorting(t *testing.T) {
	e := newEnv(t, testConfig(t))
	dir := filepath.Join(e.home, "many")
	os.MkdirAll(dir, 0o755)
	for i := range 1005 {
		mustWrite(t, filepath.Join(dir, fmt.Sprintf("f%04d", i)), "")
	}
	// A directory sorts first even though its name sorts last.
	os.Mkdir(filepath.Join(dir, "zzz"), 0o755)
	_, body := e.Call("GET", "/v1/files?path="+q(dir), nil)
	entries := body["entries"].([]any)
	if len(entries) != 1000 || body["truncated"] != true {
		t.Fatalf("%d entries, truncated %v", len(entries), body["truncated"])
	}
	first, last := entries[0].(map[string]any)["name"], entries[999].(map[string]any)["name"]
	if first != "zzz" || last != "f0998" {
		t.Fatalf("first %v last %v", first, last)
	}
}

func TestReadFile(t *testing.T) {
	e := newEnv(t, testConfig(t))
	dir := filepath.Join(e.home, "r")
	mustWrite(t, filepath.Join(dir, "data.json"), `{"a":1}`)
	mustWrite(t, filepath.Join(dir, "notes.txt"), "hello")
	mustWrite(t, filepath.Join(dir, "blob.unknownext"), "\x00\x01")
	mustWrite(t, filepath.Join(dir, "empty"), "")
	mustWrite(t, filepath.Join(dir, "résumé été.md"), "# cv")
	syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644)

	cases := []struct {
		name, query, ctype, disp, body string
	}{
		{"json", "data.json", "application/json", `attachment; filename=data.json`, `{"a":1}`},
		{"text inline", "notes.txt&disposition=inline", "text/plain; charset=utf-8", `inline; filename=notes.txt`, "hello"},
		{"unknown", "blob.unknownext", "application/octet-stream", `attachment; filename=blob.unknownext`, "\x00\x01"},
		{"empty", "empty", "application/octet-stream", `attachment; filename=empty`, ""},
		{"unicode", q("résumé été.md"), "text/markdown; charset=utf-8", `attachment; filename*=utf-8''r%C3%A9sum%C3%A9%20%C3%A9t%C3%A9.md`, "# cv"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := e.Do("GET", "/v1/files/content?path="+q(dir+"/")+c.query, nil)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || string(body) != c.body {
				t.Fatalf("%d %q", resp.StatusCode, body)
			}
			if got := resp.Header.Get("Content-Type"); got != c.ctype {
				t.Fatalf("Content-Type %q, want %q", got, c.ctype)
			}
			if got := resp.Header.Get("Content-Disposition"); got != c.disp {
				t.Fatalf("Content-Disposition %q, want %q", got, c.disp)
			}
			if resp.Header.Get("Content-Length") != strconv.Itoa(len(c.body)) {
				t.Fatalf("Content-Length %q", resp.Header.Get("Content-Length"))
			}
		})
	}
	// Ranges are served, so an interrupted download can resume.
	resp := e.Do("GET", "/v1/files/content?path="+q(filepath.Join(dir, "notes.txt")), nil, "Range", "bytes=1-3")
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 206 || string(b) != "ell" {
		t.Fatalf("range: %d %q", resp.StatusCode, b)
	}

	for _, c := range []struct {
		query, code, param string
		status             int
	}{
		{"", "validation_error", "path", 400},
		{"path=", "validation_error", "path", 400},
		{"path=" + q(dir), "validation_error", "path", 400},
		{"path=" + q(filepath.Join(dir, "fifo")), "validation_error", "path", 400},
		{"path=" + q(filepath.Join(dir, "missing")), "file_not_found", "", 404},
		{"path=" + q(filepath.Join(dir, "notes.txt")) + "&disposition=download", "validation_error", "disposition", 400},
	} {
		status, body := e.Call("GET", "/v1/files/content?"+c.query, nil)
		wantError(t, status, body, c.status, c.code, c.param)
	}
}

// untar reads an archive into name -> (type, content or link target).
func untar(t *testing.T, r io.Reader) map[string][2]string {
	t.Helper()
	gz, err := gzip.NewReader(r)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string][2]string{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			out[hdr.Name] = [2]string{"dir", ""}
		case tar.TypeSymlink:
			out[hdr.Name] = [2]string{"symlink", hdr.Linkname}
		case tar.TypeReg:
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			out[hdr.Name] = [2]string{"file", string(b)}
		default:
			t.Fatalf("unexpected entry %s type %c", hdr.Name, hdr.Typeflag)
		}
	}
}

func TestArchive(t *testing.T) {
	e := newEnv(t, testConfig(t))
	dir := filepath.Join(e.home, "My Project (v2)!")
	mustWrite(t, filepath.Join(dir, "main.go"), "package main")
	mustWrite(t, filepath.Join(dir, "src/日本語.txt"), "こんにちは")
	mustWrite(t, filepath.Join(dir, "src/empty"), "")
	os.Mkdir(filepath.Join(dir, "emptydir"), 0o755)
	os.Symlink("../main.go", filepath.Join(dir, "src/link"))
	os.Symlink("/etc", filepath.Join(dir, "abs")) // stored as a link, not followed
	syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644)

	resp := e.Do("GET", "/v1/files/archive?path="+q(dir), nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/gzip" {
		t.Fatalf("%d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if got := resp.Header.Get("Content-Disposition"); got != `attachment; filename="My Project v2.tar.gz"` {
		t.Fatalf("Content-Disposition %q", got)
	}
	top := "My Project (v2)!"
	want := map[string][2]string{
		top + "/":            {"dir", ""},
		top + "/main.go":     {"file", "package main"},
		top + "/abs":         {"symlink", "/etc"},
		top + "/emptydir/":   {"dir", ""},
		top + "/src/":        {"dir", ""},
		top + "/src/empty":   {"file", ""},
		top + "/src/link":    {"symlink", "../main.go"},
		top + "/src/日本語.txt": {"file", "こんにちは"},
	}
	if d := cmp.Diff(want, untar(t, resp.Body)); d != "" {
		t.Fatalf("archive (-want +got):\n%s", d)
	}

	// Names of nothing but stripped characters fall back to "archive".
	jp := filepath.Join(e.home, "日本")
	mustWrite(t, filepath.Join(jp, "a"), "a")
	resp = e.Do("GET", "/v1/files/archive?path="+q(jp), nil)
	if got := resp.Header.Get("Content-Disposition"); got != "attachment; filename=archive.tar.gz" {
		t.Fatalf("Content-Disposition %q", got)
	}
	if d := cmp.Diff(map[string][2]string{"日本/": {"dir", ""}, "日本/a": {"file", "a"}}, untar(t, resp.Body)); d != "" {
		t.Fatal(d)
	}

	// The default is the workspace.
	ws := filepath.Join(e.home, ".svc-gateway/workspace")
	mustWrite(t, filepath.Join(ws, "w.txt"), "w")
	resp = e.Do("GET", "/v1/files/archive", nil)
	if d := cmp.Diff(map[string][2]string{"workspace/": {"dir", ""}, "workspace/w.txt": {"file", "w"}}, untar(t, resp.Body)); d != "" {
		t.Fatal(d)
	}

	status, body := e.Call("GET", "/v1/files/archive?path="+q(filepath.Join(dir, "main.go")), nil)
	wantError(t, status, body, 400, "not_a_directory", "")
	status, body = e.Call("GET", "/v1/files/archive?path="+q(filepath.Join(dir, "nope")), nil)
	wantError(t, status, body, 404, "file_not_found", "")
}

func TestArchiveName(t *testing.T) {
	for in, want := range map[string]string{
		"project": "project", "My Project (v2)!": "My Project v2", "日本": "archive", "a/b": "ab",
		"..": "archive", "x.y_z-1": "x.y_z-1", "": "archive",
	} {
		if got := archiveName(in); got != want {
			t.Errorf("archiveName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriteFile(t *testing.T) {
	e := newEnv(t, testConfig(t))
	path := filepath.Join(e.home, "deep/new/dir/file.txt")
	status, entry := e.Call("PUT", "/v1/files/content?path="+q(path), "first")
	if status != 200 || entry["path"] != path || entry["type"] != "file" || entry["size"] != 5.0 || entry["name"] != "file.txt" {
		t.Fatalf("create: %d %v", status, entry)
	}
	if b, _ := os.ReadFile(path); string(b) != "first" {
		t.Fatalf("content %q", b)
	}
	fi, _ := os.Stat(path)
	if entry["modified"] != float64(fi.ModTime().UnixMilli()) || fi.Mode().Perm() != 0o644 {
		t.Fatalf("modified %v vs %v, mode %v", entry["modified"], fi.ModTime().UnixMilli(), fi.Mode())
	}

	// Overwrite keeps the old mode; a matching X-Expected-Mtime passes.
	os.Chmod(path, 0o600)
	mtime := time.Date(2023, 1, 2, 3, 4, 5, 678_000_000, time.UTC)
	os.Chtimes(path, mtime, mtime)
	status, entry = e.Call("PUT", "/v1/files/content?path="+q(path), "second", "X-Expected-Mtime", strconv.FormatInt(mtime.UnixMilli(), 10))
	if status != 200 || entry["size"] != 6.0 {
		t.Fatalf("overwrite: %d %v", status, entry)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode after overwrite %v", fi.Mode())
	}
	status, body := e.Call("PUT", "/v1/files/content?path="+q(path), "third", "X-Expected-Mtime", "1")
	wantError(t, status, body, 412, "modified", "")
	status, body = e.Call("PUT", "/v1/files/content?path="+q(path)+"&overwrite=false", "third")
	wantError(t, status, body, 409, "file_exists", "")
	if b, _ := os.ReadFile(path); string(b) != "second" {
		t.Fatalf("refused writes changed the file: %q", b)
	}
	// X-Expected-Mtime is ignored when the file does not exist;
	// overwrite=false writes a new file.
	fresh := filepath.Join(e.home, "fresh.txt")
	if status, _ := e.Call("PUT", "/v1/files/content?path="+q(fresh)+"&overwrite=false", "x", "X-Expected-Mtime", "1"); status != 200 {
		t.Fatalf("new file with overwrite=false: %d", status)
	}
	// ~ paths and an empty body.
	status, entry = e.Call("PUT", "/v1/files/content?path="+q("~/zero.bin"), "")
	if status != 200 || entry["size"] != 0.0 || entry["path"] != filepath.Join(e.home, "zero.bin") {
		t.Fatalf("zero bytes: %d %v", status, entry)
	}

	// Writing through a symlink updates its target and keeps the link.
	target := filepath.Join(e.home, "real.txt")
	mustWrite(t, target, "old")
	link := filepath.Join(e.home, "alias.txt")
	os.Symlink("real.txt", link)
	status, entry = e.Call("PUT", "/v1/files/content?path="+q(link), "via link")
	if status != 200 || entry["path"] != target {
		t.Fatalf("via link: %d %v", status, entry)
	}
	if b, _ := os.ReadFile(target); string(b) != "via link" {
		t.Fatalf("target %q", b)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatal("the link was replaced")
	}

	for _, c := range []struct {
		query, header, code, param string
		status                     int
	}{
		{"", "", "validation_error", "path", 400},
		{"path=" + q(e.home), "", "validation_error", "path", 400},
		{"path=" + q(path) + "&overwrite=maybe", "", "validation_error", "overwrite", 400},
		{"path=" + q(path), "yesterday", "validation_error", "X-Expected-Mtime", 400},
		{"path=" + q(filepath.Join(path, "under-a-file")), "", "not_a_directory", "", 400},
	} {
		var hdr []string
		if c.header != "" {
			hdr = []string{"X-Expected-Mtime", c.header}
		}
		status, body := e.Call("PUT", "/v1/files/content?"+c.query, "x", hdr...)
		wantError(t, status, body, c.status, c.code, c.param)
	}
	assertNoTempFiles(t, e.home)
}

// assertNoTempFiles checks no upload or move temporary is left behind.
func assertNoTempFiles(t *testing.T, root string) {
	t.Helper()
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && (strings.HasPrefix(d.Name(), ".svc-upload-") || strings.HasPrefix(d.Name(), ".svc-move-")) {
			t.Errorf("temporary left behind: %s", path)
		}
		return nil
	})
}

func TestDeleteFile(t *testing.T) {
	e := newEnv(t, testConfig(t))
	tree := filepath.Join(e.home, "tree")
	mustWrite(t, filepath.Join(tree, "a/b/c.txt"), "c")
	os.Chmod(filepath.Join(tree, "a/b"), 0o500) // rm -rf still removes it as its owner... and as root
	target := filepath.Join(e.home, "keep")
	mustWrite(t, filepath.Join(target, "precious"), "p")
	link := filepath.Join(e.home, "link")
	os.Symlink(target, link)

	if status, body := e.Call("DELETE", "/v1/files?path="+q(link), nil); status != 200 || body["ok"] != true {
		t.Fatalf("delete link: %d %v", status, body)
	}
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Fatal("link still there")
	}
	if _, err := os.Stat(filepath.Join(target, "precious")); err != nil {
		t.Fatal("the link's target was removed")
	}
	os.Chmod(filepath.Join(tree, "a/b"), 0o755)
	if status, _ := e.Call("DELETE", "/v1/files?path="+q(tree), nil); status != 200 {
		t.Fatalf("delete tree: %d", status)
	}
	if _, err := os.Stat(tree); !os.IsNotExist(err) {
		t.Fatal("tree still there")
	}
	// Like rm -rf, a missing path is fine.
	if status, _ := e.Call("DELETE", "/v1/files?path="+q(tree), nil); status != 200 {
		t.Fatalf("delete missing: %d", status)
	}
	status, body := e.Call("DELETE", "/v1/files?path=", nil)
	wantError(t, status, body, 400, "validation_error", "path")
	status, body = e.Call("DELETE", "/v1/files?path=/", nil)
	wantError(t, status, body, 400, "validation_error", "path")
}

func TestMakeDir(t *testing.T) {
	e := newEnv(t, testConfig(t))
	dir := filepath.Join(e.home, "x/y/z")
	for range 2 { // idempotent
		status, entry := e.Call("POST", "/v1/files/dir?path="+q(dir), nil)
		if status != 200 || entry["type"] != "directory" || entry["path"] != dir || entry["size"] != nil || entry["name"] != "z" {
			t.Fatalf("%d %v", status, entry)
		}
	}
	mustWrite(t, filepath.Join(e.home, "file"), "f")
	status, body := e.Call("POST", "/v1/files/dir?path="+q(filepath.Join(e.home, "file")), nil)
	wantError(t, status, body, 409, "file_exists", "")
	status, body = e.Call("POST", "/v1/files/dir", nil)
	wantError(t, status, body, 400, "validation_error", "path")
}
