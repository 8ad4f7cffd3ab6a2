package docker_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/runtime"
)

// TestInstallsShareADaemon: two installs use the same instance id without
// colliding, each lists only its own, and removing one leaves the other.
func TestInstallsShareADaemon(t *testing.T) {
	a, b := newDriver(t), newDriver(t)
	up(t, a, spec(t, "same"))
	up(t, b, spec(t, "same"))
	sb := spec(t, "onlyb")
	if err := b.Create(t.Context(), sb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Remove(context.Background(), "onlyb") })
	ids, err := a.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{"same"}) {
		t.Errorf("install a lists %v, want [same]", ids)
	}
	sh(t, a, "same", "echo a > /home/who")
	sh(t, b, "same", "echo b > /home/who")
	if err := a.Remove(t.Context(), "same"); err != nil {
		t.Fatal(err)
	}
	if st, err := b.Inspect(t.Context(), "same"); err != nil || st.State != runtime.Running {
		t.Fatalf("b's instance after a's remove: %+v %v", st, err)
	}
	if got := sh(t, b, "same", "cat /home/who"); got != "b\n" {
		t.Errorf("b's disk holds %q", got)
	}
}

// TestNetworkIsolation: the host (the edge) reaches an instance on its
// address; another instance cannot, though it reaches the host.
func TestNetworkIsolation(t *testing.T) {
	d := newDriver(t)
	up(t, d, spec(t, "server"))
	up(t, d, spec(t, "client"))
	sh(t, d, "server", "mkdir -p /tmp/www && echo hello > /tmp/www/index.html && httpd -p 8080 -h /tmp/www")
	st, err := d.Inspect(t.Context(), "server")
	if err != nil || !st.Addr.IsValid() {
		t.Fatalf("server: %+v %v", st, err)
	}
	url := fmt.Sprintf("http://%s:8080/index.html", st.Addr)
	var body string
	for i := 0; ; i++ { // httpd forks into the background; give it a moment
		resp, err := http.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			break
		}
		if i == 50 {
			t.Fatalf("host to instance: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if body != "hello\n" {
		t.Fatalf("host to instance: %q", body)
	}

	// Positive control: the client instance reaches a listener on the host.
	gw := strings.TrimSpace(sh(t, d, "client", `ip route | awk '/^default/ {print $3}'`))
	ln, err := net.Listen("tcp", gw+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("host\n"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	if got := sh(t, d, "client", fmt.Sprintf("nc -w 3 %s %d </dev/null", gw, port)); got != "host\n" {
		t.Fatalf("instance to host: %q", got)
	}
	res, err := d.Exec(t.Context(), "client", runtime.ExecSpec{
		Cmd:     []string{"/bin/sh", "-c", fmt.Sprintf("echo 'GET /index.html HTTP/1.0\r\n\r' | nc -w 3 %s 8080", st.Addr)},
		Timeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == 0 || strings.Contains(string(res.Stdout), "hello") {
		t.Errorf("instance reached another instance: exit %d, %q", res.ExitCode, res.Stdout)
	}
}
