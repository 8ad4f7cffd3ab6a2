// Package browsertest runs the web tools' pages in a real browser for
// tests: Debian's chromium, headless, driven through chromedp, behind a
// proxy that plays the platform's edge (it adds the gateway token, rewrites
// Host and proxies WebSockets), so pages are exercised as users get them.
package browsertest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/svc-dev/svc/internal/gateway"
)

// EnvRequire set to 1 makes a missing browser a failure instead of a
// skip; make test sets it (scripts/setup.sh test installs chromium).
const EnvRequire = "SVC_TEST_BROWSER"

// Chromium returns the browser's path, skipping or failing the test when
// there is none. SVC_CHROMIUM overrides the search.
func Chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("SVC_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(EnvRequire) == "1" {
		t.Fatalf("%s=1 but no chromium is installed (scripts/setup.sh test installs it)", EnvRequire)
	}
	t.Skipf("no chromium (set %s=1 to make this a failure)", EnvRequire)
	return ""
}

// New starts a headless browser with a fresh profile and returns a
// chromedp context for one tab, ended with the test.
func New(t testing.TB) context.Context {
	t.Helper()
	// chromedp's defaults (headless, no first run, background networking
	// and sync off, ...) plus what this machine needs.
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Chromium(t)),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true), // tests run as root
		chromedp.Flag("disable-gpu", true),
		// The machine's closed network would otherwise fill the log with
		// refused background connections.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 800),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf),
		chromedp.WithBrowserOption(chromedp.WithConsolef(func(f string, a ...any) { t.Logf("console: "+f, a...) })))
	ctx, cancelTime := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	// Start the browser now, so a broken install fails here and not in
	// the middle of a test's actions.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// Edge serves target through a proxy that adds the gateway token, as the
// platform's edge does for requests it authenticated, and returns the
// proxy's URL.
func Edge(t testing.TB, target, token string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(u)
		r.SetXForwarded()
		r.Out.Header.Set(gateway.TokenHeader, token)
	}}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return srv.URL
}

// Serve runs h on a loopback listener for the test and returns its URL.
func Serve(t testing.TB, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// Type focuses the element sel and presses a key for each character of
// text the way a keyboard does: a keyDown carrying the text, then a keyUp.
// chromedp's SendKeys adds a separate char event, which xterm.js (reading
// keydown and input events) would take as a second keystroke.
func Type(sel string, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := chromedp.Focus(chromedp.CSS(sel))(ctx, t); err != nil {
			return err
		}
		for _, r := range text {
			var down, up *input.DispatchKeyEventParams
			var typed string
			for _, k := range kb.Encode(r) {
				switch k.Type {
				case input.DispatchKeyEventTypeKeyDown:
					down = k
				case input.DispatchKeyEventTypeKeyUp:
					up = k
				case input.DispatchKeyEventTypeChar:
					typed = k.Text
				}
			}
			if down == nil || up == nil {
				return fmt.Errorf("no key for %q", r)
			}
			down.Text, down.UnmodifiedText = typed, typed
			for _, k := range []*input.DispatchKeyEventParams{down, up} {
				if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, *k); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
