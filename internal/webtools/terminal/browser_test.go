package terminal

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/svc-dev/svc/internal/webtools"
	"github.com/svc-dev/svc/internal/webtools/browsertest"
)

// rowsText is the terminal's screen as the DOM renderer draws it.
const rowsText = `document.querySelector('.xterm-rows').textContent`

// TestBrowser loads the page in chromium through an edge-like proxy, types
// into xterm.js and reads the shell's answer from the page; then resizes
// the window and checks the shell was told.
func TestBrowser(t *testing.T) {
	ctx := browsertest.New(t)
	home := t.TempDir()
	s := New(DefaultConfig(home, nil), nil)
	t.Cleanup(func() { s.Close() })
	edge := browsertest.Edge(t, browsertest.Serve(t, webtools.Protect(token, s.Handler())), token)

	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1000, 600),
		chromedp.Navigate(edge+"/"),
		chromedp.WaitReady(chromedp.CSS(".xterm-rows")),
		// The prompt shows that the WebSocket is up and the shell started.
		chromedp.Poll[chromedp.Void](rowsText+`.includes('#') || `+rowsText+`.includes('$')`),
		browsertest.Type(".xterm-helper-textarea", "echo hello-$((6*7))\r"),
		chromedp.Poll[chromedp.Void](rowsText+`.includes('hello-42')`),
	); err != nil {
		screen, _ := chromedp.Run(ctx, chromedp.Evaluate[string](rowsText))
		t.Fatalf("typing a command: %v; screen: %q", err, screen)
	}

	size := func() (rows, cols int) {
		t.Helper()
		if err := chromedp.Do(ctx,
			browsertest.Type(".xterm-helper-textarea", "clear; echo SIZE=$(stty size | tr ' ' x)\r"),
			chromedp.Poll[chromedp.Void](`/SIZE=\d+x\d+/.test(`+rowsText+`)`, chromedp.WithPollingTimeout(15*time.Second)),
		); err != nil {
			t.Fatalf("stty size: %v", err)
		}
		text, err := chromedp.Run(ctx, chromedp.Evaluate[string](rowsText))
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`SIZE=(\d+)x(\d+)`).FindStringSubmatch(text)
		rows, _ = strconv.Atoi(m[1])
		cols, _ = strconv.Atoi(m[2])
		return rows, cols
	}
	rows, cols := size()
	if rows < 10 || cols < 40 {
		t.Fatalf("the shell's terminal is %dx%d in a 1000x600 window", cols, rows)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(600, 300)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, c := size()
		if r < rows && c < cols {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after shrinking the window the shell still has %dx%d (was %dx%d)", c, r, cols, rows)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
