package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/svc-dev/svc/internal/gateway"
	"github.com/svc-dev/svc/internal/harness"
)

// TestRunWebTools runs the gateway with the three web tools turned on (by
// environment and by flag) and uses each through its own listener.
func TestRunWebTools(t *testing.T) {
	home := t.TempDir()
	gwAddr, termAddr, filesAddr, dashAddr := freeAddr(t), freeAddr(t), freeAddr(t), freeAddr(t)
	env := map[string]string{
		"SVC_GATEWAY_TOKEN": "tok", "HOME": home,
		"SVC_TERMINAL_PORT": termAddr, "SVC_FILES_PORT": filesAddr,
		"SVC_INSTANCE_ID": "i1abc", "SVC_INSTANCE_URL": "https://i1abc.apps.example",
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"svc-gateway", "--listen", gwAddr, "--dashboard-port", dashAddr},
			func(k string) string { return env[k] }, io.Discard, io.Discard)
	}()
	waitUp(t, "http://"+gwAddr, "tok")

	for _, addr := range []string{termAddr, filesAddr, dashAddr} {
		if status, _ := get(t, "http://"+addr+"/", ""); status != 401 {
			t.Fatalf("%s without the token: %d", addr, status)
		}
		req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
		req.Header.Set(gateway.TokenHeader, "tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("%s page: %d %s", addr, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}

	// The file browser lists through the gateway's files code.
	if status, body := get(t, "http://"+filesAddr+"/v1/files?path=~", "tok"); status != 200 || body["path"] != home {
		t.Fatalf("files listing: %d %v", status, body)
	}

	// The dashboard knows the instance and links to the tools at the
	// ports they listen on.
	status, body := get(t, "http://"+dashAddr+"/api/status", "tok")
	if status != 200 || body["instance_id"] != "i1abc" || body["agent"] != harness.GeneralA || body["version"] != gateway.Version {
		t.Fatalf("dashboard status: %d %v", status, body)
	}
	links := map[string]string{}
	for _, tool := range body["tools"].([]any) {
		m := tool.(map[string]any)
		links[m["name"].(string)] = m["url"].(string)
		if m["name"] != "Desktop" && m["up"] != true {
			t.Errorf("%s is not up: %v", m["name"], m)
		}
	}
	port := func(addr string) string { return addr[strings.LastIndex(addr, ":")+1:] }
	want := map[string]string{
		"Desktop":  "https://i1abc-6080.apps.example" + desktopPath,
		"Terminal": "https://i1abc-" + port(termAddr) + ".apps.example/",
		"Files":    "https://i1abc-" + port(filesAddr) + ".apps.example/",
	}
	for k, v := range want {
		if links[k] != v {
			t.Errorf("link to %s: %q, want %q", k, links[k], v)
		}
	}

	// A terminal session; stopping the gateway ends its shell.
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	c, _, err := websocket.Dial(wctx, "ws://"+termAddr+"/ws", &websocket.DialOptions{HTTPHeader: http.Header{gateway.TokenHeader: {"tok"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.Write(wctx, websocket.MessageBinary, []byte("echo PID=$(( $$ + 0 ))\r"))
	var out strings.Builder
	pid := 0
	for pid == 0 {
		_, data, err := c.Read(wctx)
		if err != nil {
			t.Fatalf("terminal: %v; output %q", err, out.String())
		}
		out.Write(data)
		// The typed line echoes too; only the answer has digits.
		if m := regexp.MustCompile(`PID=(\d+)\r`).FindStringSubmatch(out.String()); m != nil {
			pid, _ = strconv.Atoi(m[1])
		}
	}
	go func() {
		for {
			if _, _, err := c.Read(context.Background()); err != nil {
				return
			}
		}
	}()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	if syscall.Kill(pid, 0) == nil {
		t.Fatalf("the terminal's shell %d outlived the gateway", pid)
	}
}

func TestWebToolsOffByDefault(t *testing.T) {
	fl := flag.NewFlagSet("x", flag.ContinueOnError)
	tf := addToolFlags(fl)
	cfg := gateway.DefaultConfig()
	gw, err := gateway.New(cfg, gateway.Registry{Default: harness.GeneralA}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	log := slog.New(slog.DiscardHandler)
	got, err := webTools(tf, func(string) string { return "" }, cfg, gw, log)
	if err != nil || len(got) != 0 {
		t.Fatalf("no settings: %d services, %v", len(got), err)
	}
	// A bad setting stops the gateway at start, and a listener opened
	// before it is released.
	addr := freeAddr(t)
	env := map[string]string{"SVC_TERMINAL_PORT": addr, "SVC_FILES_PORT": "eighty"}
	if _, err := webTools(tf, func(k string) string { return env[k] }, cfg, gw, log); err == nil || !strings.Contains(err.Error(), "eighty") {
		t.Fatalf("bad port: %v", err)
	}
	env["SVC_FILES_PORT"] = ""
	got, err = webTools(tf, func(k string) string { return env[k] }, cfg, gw, log)
	if err != nil || len(got) != 1 || got[0].name != "terminal" {
		t.Fatalf("terminal only: %v %v", got, err)
	}
	got[0].ln.Close()
}

func TestListenAddr(t *testing.T) {
	cases := map[string]string{"": "", "7681": ":7681", " 8080 ": ":8080", "127.0.0.1:9119": "127.0.0.1:9119", ":0": ":0"}
	for in, want := range cases {
		if got, err := listenAddr(in); err != nil || got != want {
			t.Errorf("listenAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"0", "70000", "-1", "http"} {
		if _, err := listenAddr(bad); err == nil {
			t.Errorf("listenAddr(%q) accepted", bad)
		}
	}
}
