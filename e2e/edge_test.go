package e2e

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/svctest"
	"github.com/svc-dev/svc/sdk"
)

// TestEdgeRoutesAndAuthenticates: default and per-port URLs, public ports
// with and without prefix, /health, what the edge strips and adds, and
// every way authentication fails.
func TestEdgeRoutesAndAuthenticates(t *testing.T) {
	env := svctest.New(t, svctest.Options{})
	ctx := context.Background()
	env.Template("web", svctest.WebApp(8000, 9000, 9001), 8000)
	in, err := env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "web",
		PublicPorts: []sdk.PortRequest{{Port: 9000, Prefix: ptr("api")}, {Port: 9001}}})
	if err != nil {
		t.Fatal(err)
	}
	key := env.Client.Key
	hc := plainClient()
	withKey := map[string]string{"X-Svc-Key": key}
	portURL := env.Client.InstanceClient(in).Port(9000).BaseURL

	// Default route and per-port URL.
	if code, b, _ := fetch(t, hc, "GET", in.URL+"/", withKey, nil); code != 200 || b != "hello from port 8000\n" {
		t.Fatalf("default route: %d %q", code, b)
	}
	if code, b, _ := fetch(t, hc, "GET", portURL+"/", withKey, nil); code != 200 || b != "hello from port 9000\n" {
		t.Fatalf("port URL: %d %q", code, b)
	}
	// The SDK's instance client does the same.
	resp, err := env.Client.InstanceClient(in).Port(9001).Get(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	// Forwarded: no key, no Authorization, the gateway token, the host.
	token := gatewayToken(t, env, in.ID)
	code, b, _ := fetch(t, hc, "GET", in.URL+"/headers?a=1", map[string]string{"X-Svc-Key": key,
		"Authorization": "Bearer " + key, "X-Svc-Gateway-Token": "forged", "Cookie": "app=1; svc_edge=zzz; other=2"}, nil)
	e := decodeEcho(t, b)
	if code != 200 || e.get("X-Svc-Key") != "" || e.get("Authorization") != "" || e.get("X-Svc-Gateway-Token") != token ||
		e.get("Cookie") != "app=1; other=2" || e.Host != strings.TrimPrefix(in.URL, "http://") || e.Query != "a=1" ||
		e.get("X-Forwarded-For") != "127.0.0.1" || e.get("X-Forwarded-Proto") != "http" {
		t.Fatalf("forwarded to the instance: %d %+v", code, e)
	}

	// Public ports: no credential; the application's own Authorization
	// passes, a workspace key never does, and no gateway token is added.
	var prefixed, slug sdk.PublicPort
	for _, p := range in.PublicPorts {
		switch p.Port {
		case 9000:
			prefixed = p
		case 9001:
			slug = p
		}
	}
	if !strings.HasPrefix(prefixed.URL, "http://api-"+in.ID+".localhost:") {
		t.Fatalf("prefixed URL %s", prefixed.URL)
	}
	code, b, _ = fetch(t, hc, "GET", prefixed.URL+"/headers", map[string]string{"Authorization": "Basic dTpw",
		"X-Svc-Gateway-Token": "forged", "X-Svc-Key": key}, nil)
	e = decodeEcho(t, b)
	if code != 200 || e.Port != "9000" || e.get("Authorization") != "Basic dTpw" || e.get("X-Svc-Gateway-Token") != "" || e.get("X-Svc-Key") != "" {
		t.Fatalf("public prefixed: %d %+v", code, e)
	}
	code, b, _ = fetch(t, hc, "GET", slug.URL+"/headers", map[string]string{"Authorization": "Bearer " + key}, nil)
	e = decodeEcho(t, b)
	if code != 200 || e.Port != "9001" || e.get("Authorization") != "" {
		t.Fatalf("public slug: %d %+v", code, e)
	}

	// /health is the edge's own, on every host, without a credential.
	for _, u := range []string{in.URL, portURL, prefixed.URL, slug.URL} {
		code, b, _ := fetch(t, hc, "GET", u+"/health", nil, nil)
		if code != 200 || b != `{"ok":true,"status":"running"}`+"\n" {
			t.Errorf("%s/health: %d %q", u, code, b)
		}
	}

	// Failures.
	other := env.NewWorkspace("other")
	unknown := strings.Replace(in.URL, in.ID, "zzzzzzzzzz", 1)
	for _, c := range []struct {
		name   string
		url    string
		header map[string]string
		code   int
		body   string
	}{
		{"no credential", in.URL + "/", nil, 401, `{"error":"unauthorized"}`},
		{"no credential, unknown id", unknown + "/", nil, 401, `{"error":"unauthorized"}`},
		{"unknown key", in.URL + "/", map[string]string{"X-Svc-Key": "sk_live_" + strings.Repeat("x", 32)}, 401, `{"error":"unauthorized"}`},
		{"garbage key", in.URL + "/", map[string]string{"X-Svc-Key": "nope"}, 401, `{"error":"unauthorized"}`},
		{"bearer is not a credential here", in.URL + "/", map[string]string{"Authorization": "Bearer " + key}, 401, `{"error":"unauthorized"}`},
		{"other workspace", in.URL + "/", map[string]string{"X-Svc-Key": other.Key}, 404, `{"error":"not_found"}`},
		{"unknown instance", unknown + "/", withKey, 404, `{"error":"not_found"}`},
		{"unknown public host", strings.Replace(in.URL, in.ID, strings.Repeat("q", 20), 1) + "/", nil, 404, `{"error":"not_found"}`},
		{"unknown prefix host", strings.Replace(in.URL, in.ID, "nope-"+in.ID, 1) + "/", nil, 404, `{"error":"not_found"}`},
		{"no such form", strings.Replace(in.URL, in.ID, "not-a-host-form", 1) + "/", withKey, 404, `{"error":"not_found"}`},
		{"port out of range", strings.Replace(in.URL, in.ID, in.ID+"-70000", 1) + "/", withKey, 404, `{"error":"not_found"}`},
	} {
		code, b, h := fetch(t, hc, "GET", c.url, c.header, nil)
		if code != c.code || strings.TrimSpace(b) != c.body || h.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %q", c.name, code, b)
		}
	}
	// A running instance with nothing on the port: 502 at once.
	closed := strings.Replace(in.URL, in.ID, in.ID+"-9999", 1)
	if code, b, _ := fetch(t, hc, "GET", closed+"/", withKey, nil); code != 502 || !strings.Contains(b, `"error":"bad_gateway"`) {
		t.Errorf("closed port: %d %q", code, b)
	}
}

// TestSignedURLs: a signed URL becomes a host-only cookie; tampered,
// expired and other-host tokens fail; signed URLs and public ports are
// independent; the app never sees the token or the cookie.
func TestSignedURLs(t *testing.T) {
	env := svctest.New(t, svctest.Options{})
	ctx := context.Background()
	env.Template("web", svctest.WebApp(8000, 9000), 8000)
	in, err := env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "web", PublicPorts: []sdk.PortRequest{{Port: 9000}}})
	if err != nil {
		t.Fatal(err)
	}
	hc := plainClient()

	su, err := env.Client.SignedURL(ctx, in.ID, sdk.SignedURLRequest{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	if su.Port != 8000 || !strings.HasPrefix(su.URL, in.URL+"/?svc_token=") || su.ExpiresAt < now+3590 || su.ExpiresAt > now+3610 {
		t.Fatalf("default signed URL %+v", su)
	}
	// Opening it: a cookie for this host only, and a redirect without the token.
	code, _, h := fetch(t, hc, "GET", strings.Replace(su.URL, "/?", "/headers?x=1&", 1), nil, nil)
	setCookie := h.Get("Set-Cookie")
	if code != 302 || h.Get("Location") != "/headers?x=1" || !strings.HasPrefix(setCookie, "svc_edge=") ||
		!strings.Contains(setCookie, "HttpOnly") || !strings.Contains(setCookie, "SameSite=Lax") ||
		strings.Contains(strings.ToLower(setCookie), "domain=") || !strings.Contains(setCookie, "Path=/") {
		t.Fatalf("open signed URL: %d %v", code, h)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Transport: sdk.Transport(), Jar: jar}
	code, b, _ := fetch(t, browser, "GET", strings.Replace(su.URL, "/?", "/headers?x=1&", 1), nil, nil)
	e := decodeEcho(t, b)
	if code != 200 || e.Query != "x=1" || e.get("Cookie") != "" || e.get("X-Svc-Gateway-Token") != gatewayToken(t, env, in.ID) {
		t.Fatalf("after the redirect: %d %+v", code, e)
	}
	// The cookie keeps working without the token, on this host only.
	if code, b, _ := fetch(t, browser, "GET", in.URL+"/", nil, nil); code != 200 || b != "hello from port 8000\n" {
		t.Fatalf("with the cookie: %d %q", code, b)
	}
	portURL := env.Client.InstanceClient(in).Port(9000).BaseURL
	if code, _, _ := fetch(t, browser, "GET", portURL+"/", nil, nil); code != 401 {
		t.Fatalf("the cookie reached another host: %d", code)
	}
	cookie := strings.SplitN(setCookie, ";", 2)[0]
	if code, _, _ := fetch(t, hc, "GET", portURL+"/", map[string]string{"Cookie": cookie}, nil); code != 401 {
		t.Fatalf("cookie replayed on another host: %d", code)
	}
	token := strings.SplitN(su.URL, "svc_token=", 2)[1]
	for name, u := range map[string]string{
		"tampered mac":    in.URL + "/?svc_token=" + token[:len(token)-2] + "xx",
		"extended expiry": in.URL + "/?svc_token=" + "9" + token,
		"other host":      portURL + "/?svc_token=" + token,
		"garbage":         in.URL + "/?svc_token=abc",
	} {
		if code, b, _ := fetch(t, hc, "GET", u, nil, nil); code != 401 || strings.TrimSpace(b) != `{"error":"unauthorized"}` {
			t.Errorf("%s: %d %q", name, code, b)
		}
	}
	// A non-GET request with the token is authenticated in place.
	if code, b, _ := fetch(t, hc, "POST", strings.Replace(su.URL, "/?", "/upload?", 1), nil, strings.NewReader("abc")); code != 200 || !strings.Contains(b, `"bytes":3`) {
		t.Fatalf("POST with token: %d %q", code, b)
	}

	// A port's signed URL and its public port are independent.
	sp, err := env.Client.SignedURL(ctx, in.ID, sdk.SignedURLRequest{Port: ptr(9000), ExpiresInSeconds: ptr(600)})
	if err != nil || sp.Port != 9000 || !strings.HasPrefix(sp.URL, portURL+"/?svc_token=") {
		t.Fatalf("port signed URL: %v %+v", err, sp)
	}
	if err := env.Client.DeletePublicPort(ctx, in.ID, 9000); err != nil {
		t.Fatal(err)
	}
	jar2, _ := cookiejar.New(nil)
	if code, b, _ := fetch(t, &http.Client{Transport: sdk.Transport(), Jar: jar2}, "GET", sp.URL, nil, nil); code != 200 || b != "hello from port 9000\n" {
		t.Fatalf("signed URL after deleting the public port: %d %q", code, b)
	}
	if _, err := env.Client.AddPublicPort(ctx, in.ID, sdk.PortRequest{Port: 9000, Prefix: ptr("p")}); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := fetch(t, hc, "GET", sp.URL, nil, nil); code != 302 {
		t.Fatalf("signed URL after re-adding the public port: %d", code)
	}

	// Expiry.
	short, err := env.Client.SignedURL(ctx, in.ID, sdk.SignedURLRequest{ExpiresInSeconds: ptr(1)})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(time.Unix(short.ExpiresAt, 0)) + 100*time.Millisecond)
	if code, _, _ := fetch(t, hc, "GET", short.URL, nil, nil); code != 401 {
		t.Fatalf("expired signed URL: %d", code)
	}

	// Minting: validation, foreign ids.
	for _, req := range []sdk.SignedURLRequest{{Port: ptr(0)}, {Port: ptr(65536)}, {ExpiresInSeconds: ptr(0)}, {ExpiresInSeconds: ptr(86401)}} {
		_, err := env.Client.SignedURL(ctx, in.ID, req)
		wantCode(t, err, 400, "invalid_request")
	}
	if u, err := env.Client.SignedURL(ctx, in.ID, sdk.SignedURLRequest{ExpiresInSeconds: ptr(86400)}); err != nil || u.ExpiresAt > time.Now().Unix()+86401 {
		t.Fatalf("24 h signed URL: %v %+v", err, u)
	}
	_, err = env.NewWorkspace("other").SignedURL(ctx, in.ID, sdk.SignedURLRequest{})
	wantCode(t, err, 404, "not_found")
	resp, _ := env.Client.Raw(ctx, "POST", "/v1/instances/"+in.ID+"/signed-urls", []byte(`{"ttl":5}`))
	if resp.StatusCode != 400 {
		t.Fatalf("unknown field: %d", resp.StatusCode)
	}
	resp.Body.Close()
}

// TestPublicPortRevocation: a deleted public port stops answering within
// seconds; a new slug for the same port is a different URL.
func TestPublicPortRevocation(t *testing.T) {
	env := svctest.New(t, svctest.Options{})
	ctx := context.Background()
	env.Template("web", svctest.WebApp(8000, 9000), 8000)
	in, err := env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "web", PublicPorts: []sdk.PortRequest{{Port: 9000}}})
	if err != nil {
		t.Fatal(err)
	}
	hc := plainClient()
	old := in.PublicPorts[0].URL
	if code, _, _ := fetch(t, hc, "GET", old+"/", nil, nil); code != 200 {
		t.Fatalf("public port: %d", code)
	}
	if err := env.Client.DeletePublicPort(ctx, in.ID, 9000); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, b, _ := fetch(t, hc, "GET", old+"/", nil, nil)
		if code == 404 && strings.TrimSpace(b) == `{"error":"not_found"}` {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("revoked public port still answers: %d", code)
		}
		time.Sleep(100 * time.Millisecond)
	}
	p, err := env.Client.AddPublicPort(ctx, in.ID, sdk.PortRequest{Port: 9000})
	if err != nil || p.URL == old {
		t.Fatalf("re-added: %v %+v", err, p)
	}
	if code, b, _ := fetch(t, hc, "GET", p.URL+"/", nil, nil); code != 200 || b != "hello from port 9000\n" {
		t.Fatalf("new slug: %d %q", code, b)
	}
}
