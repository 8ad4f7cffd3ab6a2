package gateway

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"archive/tar"
	"compress/gzip"
)

func TestMoveFile(t *testing.T) {
	e := newEnv(t, testConfig(t))
	h := e.home
	p := func(s string) string { return filepath.Join(h, s) }
	move := func(from, to string) (int, map[string]any) {
		return e.Call("PATCH", "/v1/files", map[string]any{"from": from, "to": to})
	}
	mustWrite(t, p("a.txt"), "a")
	status, entry := move(p("a.txt"), p("b.txt"))
	if status != 200 || entry["path"] != p("b.txt") || entry["type"] != "file" {
		t.Fatalf("rename: %d %v", status, entry)
	}
	// Into an existing directory, keeping the name.
	os.Mkdir(p("dir"), 0o755)
	if _, entry = move(p("b.txt"), p("dir")); entry["path"] != p("dir/b.txt") {
		t.Fatalf("into dir: %v", entry)
	}
	// Over an existing file.
	mustWrite(t, p("c.txt"), "new")
	if _, entry = move(p("c.txt"), p("dir/b.txt")); entry["path"] != p("dir/b.txt") {
		t.Fatalf("overwrite: %v", entry)
	}
	if b, _ := os.ReadFile(p("dir/b.txt")); string(b) != "new" {
		t.Fatalf("content %q", b)
	}
	// ~ paths, and a directory moved whole.
	if _, entry = move("~/dir", "~/moved"); entry["path"] != p("moved") || entry["type"] != "directory" {
		t.Fatalf("dir: %v", entry)
	}
	// A symlink moves itself.
	os.Symlink("moved", p("ln"))
	if _, entry = move(p("ln"), p("ln2")); entry["type"] != "symlink" {
		t.Fatalf("link: %v", entry)
	}
	if target, _ := os.Readlink(p("ln2")); target != "moved" {
		t.Fatalf("link target %q", target)
	}

	mustWrite(t, p("f"), "f")
	os.MkdirAll(p("full/moved/x"), 0o755)
	os.MkdirAll(p("d2/f"), 0o755)
	for _, c := range []struct {
		name, from, to, code, param string
		status                      int
	}{
		{"directory over a file", p("moved"), p("f"), "file_exists", "", 409},
		{"file over a directory", p("f"), p("d2"), "file_exists", "", 409},
		{"into a non-empty directory of the same name", p("moved"), p("full"), "file_exists", "", 409},
		{"into itself", p("moved"), p("moved/b.txt.d"), "validation_error", "to", 400},
		{"same file", p("f"), p("f"), "validation_error", "to", 400},
		{"missing source", p("nope"), p("x"), "file_not_found", "", 404},
		{"missing target directory", p("f"), p("no/such/dir/f"), "file_not_found", "", 404},
		{"relative", "f", p("x"), "validation_error", "from", 400},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body := move(c.from, c.to)
			wantError(t, status, body, c.status, c.code, c.param)
		})
	}
	for _, c := range []struct{ body, param string }{
		{`{"to":"/x"}`, "from"}, {`{"from":"","to":"/x"}`, "from"}, {`{"from":"/x"}`, "to"},
		{`{"from":"/x","to":7}`, "to"}, {`{"from":`, ""}, {`[]`, ""},
	} {
		status, body := e.Call("PATCH", "/v1/files", c.body)
		wantError(t, status, body, 400, "validation_error", c.param)
	}
}

// TestMoveAcrossDevices moves between the test's disk and /dev/shm, a
// tmpfs: rename fails with EXDEV and the gateway copies and removes, as
// mv does.
func TestMoveAcrossDevices(t *testing.T) {
	e := newEnv(t, testConfig(t))
	other, err := os.MkdirTemp("/dev/shm", "svc-move-")
	if err != nil {
		t.Skipf("no /dev/shm to move to: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(other) })
	var a, b syscall.Stat_t
	syscall.Stat(e.home, &a)
	syscall.Stat(other, &b)
	if a.Dev == b.Dev {
		t.Skip("/dev/shm is on the same device as the test directory here")
	}
	src := filepath.Join(e.home, "proj")
	mustWrite(t, filepath.Join(src, "sub/data.bin"), strings.Repeat("x", 1<<20))
	mustWrite(t, filepath.Join(src, "run.sh"), "#!/bin/sh")
	os.Chmod(filepath.Join(src, "run.sh"), 0o755)
	os.Symlink("run.sh", filepath.Join(src, "link"))
	mtime := time.Date(2022, 2, 2, 2, 2, 2, 0, time.UTC)
	os.Chtimes(filepath.Join(src, "sub/data.bin"), mtime, mtime)
	os.Chmod(filepath.Join(src, "sub"), 0o750)

	status, entry := e.Call("PATCH", "/v1/files", map[string]any{"from": src, "to": other})
	dest := filepath.Join(other, "proj")
	if status != 200 || entry["path"] != dest || entry["type"] != "directory" {
		t.Fatalf("%d %v", status, entry)
	}
	if _, err := os.Lstat(src); !os.IsNotExist(err) {
		t.Fatal("source still there")
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "sub/data.bin")); len(b) != 1<<20 {
		t.Fatalf("data.bin has %d bytes", len(b))
	}
	if fi, _ := os.Stat(filepath.Join(dest, "run.sh")); fi.Mode().Perm() != 0o755 {
		t.Fatalf("mode %v", fi.Mode())
	}
	if fi, _ := os.Stat(filepath.Join(dest, "sub")); fi.Mode().Perm() != 0o750 {
		t.Fatalf("dir mode %v", fi.Mode())
	}
	if fi, _ := os.Stat(filepath.Join(dest, "sub/data.bin")); !fi.ModTime().Equal(mtime) {
		t.Fatalf("mtime %v", fi.ModTime())
	}
	if target, _ := os.Readlink(filepath.Join(dest, "link")); target != "run.sh" {
		t.Fatalf("link %q", target)
	}
	// A file over an existing file on the other device.
	mustWrite(t, filepath.Join(e.home, "f.txt"), "moved")
	mustWrite(t, filepath.Join(other, "f.txt"), "old")
	if status, _ := e.Call("PATCH", "/v1/files", map[string]any{"from": filepath.Join(e.home, "f.txt"), "to": filepath.Join(other, "f.txt")}); status != 200 {
		t.Fatalf("file across: %d", status)
	}
	if b, _ := os.ReadFile(filepath.Join(other, "f.txt")); string(b) != "moved" {
		t.Fatalf("content %q", b)
	}
	assertNoTempFiles(t, other)
}

// TestPermissionErrors uses what root cannot bypass: the immutable
// attribute (ext4) and a read-only tmpfs mount. Read permission (EACCES)
// needs a non-root process: see cmd/svc-gateway's TestPermissionDenied.
func TestPermissionErrors(t *testing.T) {
	e := newEnv(t, testConfig(t))
	t.Run("immutable file", func(t *testing.T) {
		f := filepath.Join(e.home, "locked.txt")
		mustWrite(t, f, "locked")
		if out, err := exec.Command("chattr", "+i", f).CombinedOutput(); err != nil {
			t.Skipf("chattr +i unavailable here (needs root on ext4): %v %s", err, out)
		}
		t.Cleanup(func() { exec.Command("chattr", "-i", f).Run() })
		for _, c := range []struct{ method, path, body string }{
			{"DELETE", "/v1/files?path=" + q(f), ""},
			{"PUT", "/v1/files/content?path=" + q(f), "changed"},
			{"PATCH", "/v1/files", fmt.Sprintf(`{"from":%q,"to":%q}`, f, f+".moved")},
		} {
			status, body := e.Call(c.method, c.path, c.body)
			wantError(t, status, body, 403, "permission_denied", "")
		}
		if b, _ := os.ReadFile(f); string(b) != "locked" {
			t.Fatalf("content changed: %q", b)
		}
		assertNoTempFiles(t, e.home)
	})
	t.Run("read-only mount", func(t *testing.T) {
		ro := filepath.Join(e.home, "ro")
		os.Mkdir(ro, 0o755)
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", ro).CombinedOutput(); err != nil {
			t.Skipf("cannot mount a read-only tmpfs here (needs root): %v %s", err, out)
		}
		t.Cleanup(func() { exec.Command("umount", ro).Run() })
		for _, c := range []struct{ method, path, body string }{
			{"PUT", "/v1/files/content?path=" + q(filepath.Join(ro, "new.txt")), "x"},
			{"POST", "/v1/files/dir?path=" + q(filepath.Join(ro, "d")), ""},
			{"PATCH", "/v1/files", fmt.Sprintf(`{"from":%q,"to":%q}`, e.home+"/ro", e.home+"/ro2")},
		} {
			status, body := e.Call(c.method, c.path, c.body)
			if c.method == "PATCH" {
				// Renaming a mount point is EBUSY: not a permission error.
				if status < 400 {
					t.Fatalf("moving a mount point: %d %v", status, body)
				}
				continue
			}
			wantError(t, status, body, 403, "permission_denied", "")
		}
	})
}

// TestInterruptedUploadKeepsOldFile sends half a body on a raw connection
// and hangs up: the old file stays, and the temporary is removed.
func TestInterruptedUploadKeepsOldFile(t *testing.T) {
	e := newEnv(t, testConfig(t))
	f := filepath.Join(e.home, "doc.txt")
	mustWrite(t, f, "original")
	u, _ := url.Parse(e.URL)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "PUT /v1/files/content?path=%s HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n", q(f))
	conn.Write([]byte(strings.Repeat("y", 300000)))
	// Wait until the upload's temporary exists, so the hang-up happens
	// mid-body rather than before the handler ran.
	eventually(t, "the upload to start", func() bool {
		ents, _ := os.ReadDir(e.home)
		for _, d := range ents {
			if strings.HasPrefix(d.Name(), ".svc-upload-") {
				return true
			}
		}
		return false
	})
	conn.Close()
	eventually(t, "the temporary to be removed", func() bool {
		ents, _ := os.ReadDir(e.home)
		return len(ents) == 1
	})
	if b, _ := os.ReadFile(f); string(b) != "original" {
		t.Fatalf("old file changed: %q", b)
	}

	// A short chunked body that ends early fails the same way.
	conn, err = net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "PUT /v1/files/content?path=%s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", q(f))
	conn.(*net.TCPConn).CloseWrite()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("a truncated upload succeeded")
		}
	}
	if b, _ := os.ReadFile(f); string(b) != "original" {
		t.Fatalf("old file changed: %q", b)
	}
	assertNoTempFiles(t, e.home)
}

// TestSparseFileStreamsWithoutMemoryGrowth reads and archives a multi-GB
// sparse file: the gateway must stream it, so the memory it allocates
// stays far below the file's size.
func TestSparseFileStreamsWithoutMemoryGrowth(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 3 GiB twice")
	}
	const size = 3 << 30
	e := newEnv(t, testConfig(t))
	dir := filepath.Join(e.home, "big")
	os.Mkdir(dir, 0o755)
	f, err := os.Create(filepath.Join(dir, "sparse.img"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("end"), size-3)
	f.Close()

	allocated := func(do func()) uint64 {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		do()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	const budget = 64 << 20 // far below 3 GiB: proof of streaming

	var n int64
	alloc := allocated(func() {
		resp := e.Do("GET", "/v1/files/content?path="+q(filepath.Join(dir, "sparse.img")), nil)
		n, err = io.Copy(io.Discard, resp.Body)
	})
	if err != nil || n != size {
		t.Fatalf("read %d bytes, %v", n, err)
	}
	if alloc > budget {
		t.Fatalf("reading a %d-byte file allocated %d bytes", size, alloc)
	}

	var tail string
	alloc = allocated(func() {
		resp := e.Do("GET", "/v1/files/archive?path="+q(dir), nil)
		gz, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(gz)
		for {
			hdr, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if hdr.Name == "big/sparse.img" {
				if hdr.Size != size {
					t.Fatalf("archived size %d", hdr.Size)
				}
				io.CopyN(io.Discard, tr, size-3)
				b, _ := io.ReadAll(tr)
				tail = string(b)
			}
		}
	})
	if tail != "end" {
		t.Fatalf("archived file ends with %q", tail)
	}
	if alloc > budget {
		t.Fatalf("archiving a %d-byte file allocated %d bytes", size, alloc)
	}
}
