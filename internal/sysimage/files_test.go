package sysimage

import (
	"archive/tar"
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/svc-dev/svc/images"
	"github.com/svc-dev/svc/internal/template"
)

// Every template of the catalog has a build context whose Dockerfile
// starts from base and declares the default harness the catalog gives it,
// so svcd and the image agree on SVC_AGENT_TYPE.
func TestEveryTemplateHasADockerfile(t *testing.T) {
	envRE := regexp.MustCompile(`(?m)\bSVC_AGENT_TYPE=(\S+)`)
	for _, sys := range template.Catalog {
		df, err := fs.ReadFile(images.FS, sys.Name+"/Dockerfile")
		if err != nil {
			t.Errorf("%s: %v", sys.Name, err)
			continue
		}
		if !strings.Contains(string(df), "FROM ${BASE}") {
			t.Errorf("%s: Dockerfile does not start from ${BASE}", sys.Name)
		}
		if !strings.Contains(string(df), "COPY "+CommonDir+"/ /") {
			t.Errorf("%s: Dockerfile does not copy common/ (svc-init)", sys.Name)
		}
		m := envRE.FindSubmatch(df)
		switch {
		case sys.Gateway() && (m == nil || string(m[1]) != sys.Agent):
			t.Errorf("%s: Dockerfile sets SVC_AGENT_TYPE=%s, catalog says %s", sys.Name, m, sys.Agent)
		case !sys.Gateway() && m != nil:
			t.Errorf("%s has no gateway but its Dockerfile sets SVC_AGENT_TYPE", sys.Name)
		}
		if copies := strings.Contains(string(df), "COPY "+GatewayFile+" "); copies != sys.Gateway() {
			t.Errorf("%s: copies svc-gateway = %v, but the catalog's gateway = %v", sys.Name, copies, sys.Gateway())
		}
	}
	if _, err := fs.ReadFile(images.FS, Base+"/Dockerfile"); err != nil {
		t.Error(err)
	}
}

func TestBuildContext(t *testing.T) {
	gw := filepath.Join(t.TempDir(), "gw")
	if err := os.WriteFile(gw, []byte("\x7fELF fake"), 0o600); err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := buildContext(&a, "svc-general", gw); err != nil {
		t.Fatal(err)
	}
	if err := buildContext(&b, "svc-general", gw); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two contexts of the same files differ: the engine's cache would miss")
	}
	modes := map[string]int64{}
	tr := tar.NewReader(&a)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		modes[h.Name] = h.Mode
	}
	want := map[string]int64{
		"Dockerfile":                            0o644,
		"rootfs/etc/svc/sv/sshd/run":            0o755, // a script: executable
		"rootfs/etc/ssh/sshd_config.d/svc.conf": 0o644,
		GatewayFile:                             0o755,
	}
	for name, mode := range want {
		if got, ok := modes[name]; !ok || got != mode {
			t.Errorf("%s: mode %o (present %v), want %o", name, got, ok, mode)
		}
	}

	// Without a gateway, none is added.
	var c bytes.Buffer
	if err := buildContext(&c, "svc-workflow", ""); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(c.Bytes(), []byte(GatewayFile+"\x00")) {
		t.Error("svc-workflow's context carries svc-gateway")
	}
}

func TestSlim(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"usr/share/doc/bash/README":         "x",
		"usr/share/doc/bash/copyright":      "c",
		"usr/share/man/man1/bash.1.gz":      "m",
		"usr/share/locale/de/LC_MESSAGES/a": "l",
		"usr/share/locale/locale.alias":     "alias",
		"var/lib/apt/lists/x_Packages":      "p",
		"var/cache/apt/pkgcache.bin":        "b",
		"var/log/dpkg.log":                  "log",
		"etc/resolv.conf":                   "nameserver 10.0.0.1",
		"etc/hostname":                      "buildhost",
		"usr/bin/bash":                      "bin",
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := slim(root); err != nil {
		t.Fatal(err)
	}
	kept := []string{"usr/share/doc/bash/copyright", "usr/share/locale/locale.alias", "usr/bin/bash",
		"var/lib/apt/lists/partial", "var/cache/apt/archives/partial", "etc/dpkg/dpkg.cfg.d/docker"}
	gone := []string{"usr/share/doc/bash/README", "usr/share/man", "usr/share/locale/de",
		"var/lib/apt/lists/x_Packages", "var/cache/apt/pkgcache.bin", "var/log/dpkg.log", "etc/resolv.conf", "etc/hostname"}
	for _, p := range kept {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("%s should be kept: %v", p, err)
		}
	}
	for _, p := range gone {
		if _, err := os.Lstat(filepath.Join(root, p)); !os.IsNotExist(err) {
			t.Errorf("%s should be gone (err %v)", p, err)
		}
	}
	fi, err := os.Stat(filepath.Join(root, "usr/sbin/policy-rc.d"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("policy-rc.d: %v %v, want an executable", fi, err)
	}
}
