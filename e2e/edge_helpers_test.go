package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/svctest"
	"github.com/svc-dev/svc/sdk"
)

// fetch sends one request and returns the status and body.
func fetch(t *testing.T, hc *http.Client, method, url string, header map[string]string, body io.Reader) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// plainClient reaches *.localhost and follows no redirects.
func plainClient() *http.Client {
	return &http.Client{Transport: sdk.Transport(), CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
}

// echoed is what the test application's /headers saw.
type echoed struct {
	Port    string              `json:"port"`
	Host    string              `json:"host"`
	Query   string              `json:"query"`
	Headers map[string][]string `json:"headers"`
}

func decodeEcho(t *testing.T, body string) echoed {
	t.Helper()
	var e echoed
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("not an echo: %q", body)
	}
	return e
}

func (e echoed) get(name string) string {
	v := e.Headers[http.CanonicalHeaderKey(name)]
	return strings.Join(v, ",")
}

// waitStatus polls the instance until it reads status.
func waitStatus(t *testing.T, env *svctest.Env, id, status string, within time.Duration) sdk.Instance {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		in, err := env.Client.Instance(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if in.Status == status {
			return in
		}
		if time.Now().After(deadline) {
			t.Fatalf("instance %s is %s, not %s, after %s", id, in.Status, status, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// gatewayToken reads the token the platform put in the container's env.
func gatewayToken(t *testing.T, env *svctest.Env, id string) string {
	t.Helper()
	res, err := env.Client.Exec(context.Background(), id, sdk.ExecRequest{Command: "printf %s \"$SVC_GATEWAY_TOKEN\""})
	if err != nil || res.Stdout == "" {
		t.Fatalf("read gateway token: %v %+v", err, res)
	}
	return res.Stdout
}
