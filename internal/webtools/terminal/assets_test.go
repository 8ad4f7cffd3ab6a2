package terminal

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// TestVendoredAssets checks what scripts/xterm.sh wrote: each compressed
// copy matches its file (so a hand edit cannot drift), the versions and
// licenses are recorded, and every file the page loads exists.
func TestVendoredAssets(t *testing.T) {
	n := 0
	fs.WalkDir(assets, "assets", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(path, ".gz") {
			return err
		}
		n++
		raw, err := assets.ReadFile(strings.TrimSuffix(path, ".gz"))
		if err != nil {
			t.Errorf("%s has no uncompressed file: %v", path, err)
			return nil
		}
		f, _ := assets.Open(path)
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, raw) {
			t.Errorf("%s does not match its file (run make assets): %v", path, err)
		}
		return nil
	})
	if n < 3 {
		t.Errorf("%d precompressed files, want xterm.mjs, addon-fit.mjs, xterm.css", n)
	}
	versions, err := assets.ReadFile("assets/vendor/VERSIONS")
	if err != nil || !regexp.MustCompile(`(?m)^@xterm/xterm \S+ MIT$`).Match(versions) || !regexp.MustCompile(`(?m)^@xterm/addon-fit \S+ MIT$`).Match(versions) {
		t.Errorf("VERSIONS: %q %v", versions, err)
	}
	for _, lic := range []string{"assets/vendor/LICENSE.xterm", "assets/vendor/LICENSE.addon-fit"} {
		if b, err := assets.ReadFile(lic); err != nil || !bytes.Contains(b, []byte("Permission is hereby granted")) {
			t.Errorf("%s: %v", lic, err)
		}
	}
	page, _ := assets.ReadFile("assets/index.html")
	script, _ := assets.ReadFile("assets/terminal.js")
	refs := regexp.MustCompile(`(?:href|src)="([^"]+)"|from "\./([^"]+)"`).FindAllSubmatch(append(page, script...), -1)
	if len(refs) < 5 {
		t.Fatalf("found %d references in the page and its script", len(refs))
	}
	for _, m := range refs {
		ref := string(m[1]) + string(m[2])
		if strings.Contains(ref, "//") || strings.HasPrefix(ref, "/") {
			t.Errorf("%s is not a relative URL: the page must work under any host", ref)
		}
		if _, err := assets.Open("assets/" + ref); err != nil {
			t.Errorf("the page loads %s: %v", ref, err)
		}
	}
}
