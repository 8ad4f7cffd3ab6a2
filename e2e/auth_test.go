// Package e2e drives a real svcd (in-process), the real dockerd and SQLite
// through the public SDK.
package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/svc-dev/svc/internal/svctest"
	"github.com/svc-dev/svc/sdk"
)

// body reads a raw answer's JSON.
func body(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("answer is not JSON: %q", b)
	}
	return m
}

// wantCode checks an SDK error's status and code.
func wantCode(t *testing.T, err error, status int, code string) {
	t.Helper()
	e, ok := err.(*sdk.Error)
	if !ok {
		t.Fatalf("want %d %s, got %v", status, code, err)
	}
	if e.Status != status || e.Code != code {
		t.Fatalf("want %d %s, got %d %s (%s)", status, code, e.Status, e.Code, e.Message)
	}
}

func TestAuth(t *testing.T) {
	env := svctest.New(t, svctest.Options{})
	ctx := context.Background()
	anon := sdk.New(env.Server.URL, "")
	for _, path := range []string{"/v1/instances", "/v1/templates", "/v1/nope", "/v1/"} {
		resp, err := anon.Raw(ctx, "GET", path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if m := body(t, resp); resp.StatusCode != 401 || m["error"] != "unauthorized" || len(m) != 1 {
			t.Fatalf("%s without key: %d %v", path, resp.StatusCode, m)
		}
	}
	for _, key := range []string{"sk_live_00000000000000000000000000000000", "garbage", "Bearer x"} {
		resp, _ := sdk.New(env.Server.URL, key).Raw(ctx, "GET", "/v1/instances", nil)
		if m := body(t, resp); resp.StatusCode != 401 || m["error"] != "unauthorized" {
			t.Fatalf("wrong key %q: %d %v", key, resp.StatusCode, m)
		}
	}
	// Unknown paths are 404 only once the key is good.
	resp, _ := env.Client.Raw(ctx, "GET", "/v1/nope", nil)
	m := body(t, resp)
	if e, _ := m["error"].(map[string]any); resp.StatusCode != 404 || e["code"] != "not_found" {
		t.Fatalf("unknown path with key: %d %v", resp.StatusCode, m)
	}
	resp, _ = env.Client.Raw(ctx, "DELETE", "/v1/templates", nil)
	if resp.StatusCode != 404 {
		t.Fatalf("wrong method: %d", resp.StatusCode)
	}
	resp.Body.Close()
}

func TestWorkspacesAreIsolated(t *testing.T) {
	env := svctest.New(t, svctest.Options{})
	ctx := context.Background()
	env.Template("sleeper", svctest.Sleeper(), 0)
	in, err := env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "sleeper"})
	if err != nil {
		t.Fatal(err)
	}
	other := env.NewWorkspace("other")

	// The other workspace sees neither the template nor the instance, and
	// a foreign id answers exactly like an unknown one.
	if list, _ := other.Instances(ctx); len(list) != 0 {
		t.Fatalf("other workspace lists %d instances", len(list))
	}
	if list, _ := other.Templates(ctx); len(list) != 8 {
		t.Fatalf("other workspace lists %d templates", len(list))
	}
	_, err = other.CreateInstance(ctx, sdk.CreateInstance{Template: "sleeper"})
	wantCode(t, err, 400, "invalid_request")
	unknown := func(c *sdk.Client, id string) string {
		resp, _ := c.Raw(ctx, "GET", "/v1/instances/"+id, nil)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Fatalf("GET %s: %d", id, resp.StatusCode)
		}
		return string(b)
	}
	foreign := unknown(other, in.ID)
	if never := unknown(other, "zzzzzzzzzz"); never != foreign {
		t.Fatalf("foreign id answers differently from unknown id:\n%s\n%s", foreign, never)
	}
	for _, call := range []func() error{
		func() error { _, err := other.StopInstance(ctx, in.ID); return err },
		func() error { _, err := other.StartInstance(ctx, in.ID); return err },
		func() error { _, err := other.RestartInstance(ctx, in.ID); return err },
		func() error { return other.DeleteInstance(ctx, in.ID) },
		func() error { _, err := other.Exec(ctx, in.ID, sdk.ExecRequest{Command: "true"}); return err },
		func() error { _, err := other.Metrics(ctx, in.ID); return err },
		func() error { _, err := other.UpdateInstance(ctx, in.ID, map[string]any{"name": "x"}); return err },
		func() error { _, err := other.PublicPorts(ctx, in.ID); return err },
	} {
		wantCode(t, call(), 404, "not_found")
	}
	// Still running and untouched for its owner.
	got, err := env.Client.Instance(ctx, in.ID)
	if err != nil || got.Status != "running" {
		t.Fatalf("owner's instance: %v %+v", err, got)
	}
	// A deleted id reads like an unknown one too.
	if err := env.Client.DeleteInstance(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if deleted := unknown(env.Client, in.ID); deleted != foreign {
		t.Fatalf("deleted id answers differently:\n%s\n%s", deleted, foreign)
	}
	wantCode(t, env.Client.DeleteInstance(ctx, in.ID), 404, "not_found")
}
