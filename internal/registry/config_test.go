package registry_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-dev/svc/internal/fault"
	"github.com/svc-dev/svc/internal/registry"
)

// ConfigDigest names the config of a stored image: the ID an engine gives
// the image, which the system image builder compares with a fresh build.
func TestConfigDigest(t *testing.T) {
	reg := openRegistry(t, t.TempDir())
	img := randomImage(t, 1, "linux", "amd64")
	got, err := reg.ImportArchive(context.Background(), bytes.NewReader(dockerSave(t, img)), "system/cfg", "")
	if err != nil {
		t.Fatal(err)
	}
	want, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := reg.ConfigDigest(context.Background(), "system/cfg", got.Digest)
	if err != nil || cfg != want.String() {
		t.Fatalf("ConfigDigest = %q, %v; want %s", cfg, err, want)
	}
	missing := "sha256:" + string(bytes.Repeat([]byte("0"), 64))
	_, err = reg.ConfigDigest(context.Background(), "system/cfg", missing)
	wantFault(t, err, fault.NotFound)
}

// A registry given its own TmpDir leaves the shared Dir/tmp alone, so a
// second process opening the data directory does not clear the imports of
// the svcd running on it.
func TestTmpDirOfASecondProcess(t *testing.T) {
	dir := t.TempDir()
	openRegistry(t, dir)
	inflight := filepath.Join(dir, "tmp", "archive-123", "image.tar")
	if err := os.MkdirAll(filepath.Dir(inflight), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inflight, []byte("spooling"), 0o600); err != nil {
		t.Fatal(err)
	}
	own := t.TempDir()
	second, err := registry.New(context.Background(), registry.Config{Dir: dir, Username: testUser, Password: testPass, TmpDir: own})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if _, err := os.Stat(inflight); err != nil {
		t.Errorf("the first registry's spooled archive is gone: %v", err)
	}
	img := randomImage(t, 1, "linux", "amd64")
	if _, err := second.ImportArchive(context.Background(), bytes.NewReader(dockerSave(t, img)), "system/second", ""); err != nil {
		t.Fatal(err)
	}
}
