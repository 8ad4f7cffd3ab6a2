package filebrowser

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/svc-dev/svc/internal/webtools/browsertest"
)

// TestBrowser uses the page in chromium through an edge-like proxy:
// listing, new folder, upload, rename, delete and navigation, each checked
// on disk.
func TestBrowser(t *testing.T) {
	ctx := browsertest.New(t)
	target, home := start(t)
	edge := browsertest.Edge(t, target, token)
	os.WriteFile(filepath.Join(home, "existing.txt"), []byte("hello"), 0o644)
	os.Mkdir(filepath.Join(home, "sub"), 0o755)
	upload := filepath.Join(t.TempDir(), "from-the-browser.txt")
	os.WriteFile(upload, []byte("uploaded bytes"), 0o644)

	row := func(name string) chromedp.CSS { return chromedp.CSS(`#listing tr[data-name="` + name + `"]`) }
	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			status, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('status').textContent`))
			t.Fatalf("%s: %v (status line: %q)", what, err, status)
		}
	}
	onDisk := func(path string, want bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			_, err := os.Stat(path)
			if (err == nil) == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s exists: %v, want %v", path, err == nil, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	step("see the listing",
		chromedp.Navigate(edge+"/"),
		chromedp.WaitVisible(row("existing.txt")),
		chromedp.WaitVisible(row("sub")),
	)

	step("create a folder",
		chromedp.Click(chromedp.CSS("#mkdir")),
		chromedp.WaitVisible(chromedp.CSS("#dialog-input")),
		chromedp.SendKeys(chromedp.CSS("#dialog-input"), "made in the browser"),
		chromedp.Click(chromedp.CSS("#dialog-ok")),
		chromedp.WaitVisible(row("made in the browser")),
	)
	if fi, err := os.Stat(filepath.Join(home, "made in the browser")); err != nil || !fi.IsDir() {
		t.Fatalf("the new folder on disk: %v", err)
	}

	step("upload a file",
		chromedp.SetUploadFiles(chromedp.CSS("#upload"), []string{upload}),
		chromedp.WaitVisible(row("from-the-browser.txt")),
	)
	if b, err := os.ReadFile(filepath.Join(home, "from-the-browser.txt")); err != nil || string(b) != "uploaded bytes" {
		t.Fatalf("uploaded file: %q %v", b, err)
	}

	step("rename a file",
		chromedp.Click(chromedp.CSS(`#listing tr[data-name="existing.txt"] td.actions button`)), // the first: Rename
		chromedp.WaitVisible(chromedp.CSS("#dialog-input")),
		chromedp.SetValue(chromedp.CSS("#dialog-input"), "renamed.txt"),
		chromedp.Click(chromedp.CSS("#dialog-ok")),
		chromedp.WaitVisible(row("renamed.txt")),
		chromedp.WaitNotPresent(row("existing.txt")),
	)
	onDisk(filepath.Join(home, "renamed.txt"), true)
	onDisk(filepath.Join(home, "existing.txt"), false)

	step("delete a folder",
		chromedp.Click(chromedp.CSS(`#listing tr[data-name="made in the browser"] td.actions button:last-child`)),
		chromedp.WaitVisible(chromedp.CSS("#dialog-ok")),
		chromedp.Click(chromedp.CSS("#dialog-ok")),
		chromedp.WaitNotPresent(row("made in the browser")),
	)
	onDisk(filepath.Join(home, "made in the browser"), false)

	step("open a folder",
		chromedp.Click(chromedp.CSS(`#listing tr[data-name="sub"] td.name a`)),
		chromedp.WaitVisible(chromedp.CSS("#empty")),
		chromedp.Poll[chromedp.Void](`location.hash === '#' + encodeURI(`+jsString(filepath.Join(home, "sub"))+`)`),
	)
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
