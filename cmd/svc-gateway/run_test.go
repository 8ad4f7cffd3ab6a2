package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/harness/builtin"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func get(t *testing.T, url, token string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("X-Svc-Gateway-Token", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func waitUp(t *testing.T, base, token string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if status, _ := get(t, base+"/v1/version", token); status == 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("gateway did not come up")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRun(t *testing.T) {
	home := t.TempDir()
	addr := freeAddr(t)
	env := map[string]string{"SVC_GATEWAY_TOKEN": "tok", "HOME": home, "SVC_HARNESSES": "general-b, ,general-a"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"svc-gateway", "--listen", addr}, func(k string) string { return env[k] }, io.Discard, io.Discard)
	}()
	base := "http://" + addr
	waitUp(t, base, "tok")

	if status, body := get(t, base+"/v1/version", ""); status != 401 || body["error"] != "unauthorized" {
		t.Fatalf("no token: %d %v", status, body)
	}
	// Harnesses not built in are unprovisioned; the gateway still serves.
	if status, body := get(t, base+"/v1/health", "tok"); status != 200 || body["agent"] != "general-a" || body["healthy"] != false {
		t.Fatalf("health: %d %v", status, body)
	}
	if status, body := get(t, base+"/v1/files", "tok"); status != 200 || body["path"] != filepath.Join(home, ".svc-gateway/workspace") {
		t.Fatalf("workspace listing: %d %v", status, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return after cancel")
	}
}

func TestRunFlagsAndEnv(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"svc-gateway", "--version"}, func(string) string { return "" }, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "svc-gateway ") {
		t.Fatalf("--version printed %q", out.String())
	}
	err := run(context.Background(), []string{"svc-gateway", "--listen", freeAddr(t)}, func(k string) string {
		return map[string]string{"SVC_AGENT_TYPE": "hermes", "HOME": t.TempDir()}[k]
	}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "hermes") {
		t.Fatalf("unknown SVC_AGENT_TYPE: %v", err)
	}
}

func TestRegistry(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	env := builtin.Config{Home: t.TempDir()}
	reg, err := registry("", "", env, log)
	if err != nil || reg.Default != harness.GeneralA || len(reg.Harnesses) != 1 || reg.Harnesses[0].ID() != harness.GeneralA {
		t.Fatalf("default: %+v %v", reg, err)
	}
	closeHarnesses(reg)
	reg, err = registry("general-b", "coding-a, general-b, general-a", env, log)
	if err != nil || reg.Default != harness.GeneralB || len(reg.Harnesses) != 3 ||
		reg.Harnesses[0].ID() != harness.GeneralB || reg.Harnesses[1].ID() != harness.CodingA || reg.Harnesses[2].ID() != harness.GeneralA {
		t.Fatalf("general-b default: %+v %v", reg, err)
	}
	closeHarnesses(reg)
	if _, err := registry("general-a", "general-a,nope", env, log); err == nil {
		t.Fatal("unknown id in SVC_HARNESSES accepted")
	}
}

// TestPermissionDenied runs the built binary as an unprivileged user (root
// reads everything), so reads and listings meet real EACCES.
func TestPermissionDenied(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	// The unprivileged process must reach the binary and the home.
	os.Chmod(filepath.Dir(dir), 0o755)
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "svc-gateway")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	home := filepath.Join(dir, "home")
	os.MkdirAll(filepath.Join(home, "private"), 0o700)
	os.Chmod(filepath.Join(home, "private"), 0o700)
	os.WriteFile(filepath.Join(home, "secret.txt"), []byte("s"), 0o600)
	os.Chmod(filepath.Join(home, "secret.txt"), 0o000)
	os.Chmod(home, 0o755)

	addr := freeAddr(t)
	cmd := exec.Command(bin, "--listen", addr, "--home", home, "--workspace", home)
	cmd.Env = []string{"SVC_GATEWAY_TOKEN=tok"}
	if os.Getuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		if t.Failed() {
			t.Logf("gateway log:\n%s", stderr.String())
		}
	})
	base := "http://" + addr
	waitUp(t, base, "tok")
	for _, c := range []string{
		"/v1/files/content?path=" + filepath.Join(home, "secret.txt"),
		"/v1/files?path=" + filepath.Join(home, "private"),
	} {
		status, body := get(t, base+c, "tok")
		e, _ := body["error"].(map[string]any)
		if status != 403 || e["code"] != "permission_denied" {
			t.Fatalf("%s: %d %v", c, status, body)
		}
	}
	// The process is really unprivileged: it can list what is readable.
	if status, body := get(t, base+"/v1/files?path="+home, "tok"); status != 200 || len(body["entries"].([]any)) != 2 {
		t.Fatalf("home listing: %d %v", status, body)
	}
}
