package sysimage_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/gateway"
	"github.com/svc-dev/svc/internal/sysimage"
)

// openData opens a fresh data directory's store and registry.
func openData(t *testing.T) *sysimage.Data {
	t.Helper()
	d, err := sysimage.OpenData(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// wantConfig checks an image's entrypoint, SVC_AGENT_TYPE and exposed ports.
func wantConfig(t *testing.T, c *client.Client, ref, agent string, ports ...int) {
	t.Helper()
	res, err := c.ImageInspect(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	cfg := res.Config
	if want := []string{"/usr/bin/tini", "-s", "--", "/usr/local/bin/svc-init"}; !slices.Equal(cfg.Entrypoint, want) {
		t.Errorf("%s: entrypoint %q, want %q", ref, cfg.Entrypoint, want)
	}
	var gotAgent string
	for _, e := range cfg.Env {
		if v, ok := strings.CutPrefix(e, "SVC_AGENT_TYPE="); ok {
			gotAgent = v
		}
	}
	if gotAgent != agent {
		t.Errorf("%s: SVC_AGENT_TYPE=%q, want %q", ref, gotAgent, agent)
	}
	var exposed []string
	for p := range cfg.ExposedPorts {
		exposed = append(exposed, p)
	}
	var want []string
	for _, p := range ports {
		want = append(want, fmt.Sprintf("%d/tcp", p))
	}
	slices.Sort(exposed)
	slices.Sort(want)
	if !slices.Equal(exposed, want) {
		t.Errorf("%s: exposes %v, want %v", ref, exposed, want)
	}
}

// run starts image as svcd would (docker-init as PID 1) with env, and
// returns the container's id and address; it is removed at the end.
func run(t *testing.T, c *client.Client, image string, env ...string) (string, netip.Addr) {
	t.Helper()
	ctx := context.Background()
	init := true
	res, err := c.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config:     &container.Config{Image: image, Env: env, Labels: map[string]string{"svc.test": "sysimage"}},
		HostConfig: &container.HostConfig{Init: &init},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			logs(t, c, res.ID)
		}
		c.ContainerRemove(context.Background(), res.ID, client.ContainerRemoveOptions{Force: true})
	})
	if _, err := c.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
		t.Fatal(err)
	}
	in, err := c.ContainerInspect(ctx, res.ID, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range in.Container.NetworkSettings.Networks {
		if n.IPAddress.IsValid() {
			return res.ID, n.IPAddress
		}
	}
	t.Fatalf("container of %s has no address", image)
	return "", netip.Addr{}
}

func logs(t *testing.T, c *client.Client, id string) {
	rd, err := c.ContainerLogs(context.Background(), id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Tail: "60"})
	if err != nil {
		return
	}
	defer rd.Close()
	b, _ := io.ReadAll(rd)
	t.Logf("container log:\n%s", b)
}

// getJSON polls url until it answers 200 with JSON, for up to wait.
func getJSON(t *testing.T, url, token string, wait time.Duration, out any) {
	t.Helper()
	deadline := time.Now().Add(wait)
	var last error
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set(gateway.TokenHeader, token)
		}
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				if err := json.Unmarshal(body, out); err != nil {
					t.Fatalf("GET %s: %v: %s", url, err, body)
				}
				return
			}
			err = fmt.Errorf("status %d: %s", resp.StatusCode, body)
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("GET %s did not answer within %s: %v", url, wait, last)
}
