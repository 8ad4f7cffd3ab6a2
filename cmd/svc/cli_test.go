package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/svc-dev/svc/internal/svctest"
	"github.com/svc-dev/svc/sdk"
)

// svc runs the CLI in-process against env and returns stdout.
func svc(t *testing.T, env *svctest.Env, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	getenv := func(k string) string {
		return map[string]string{"SVC_URL": env.Server.URL, "SVC_API_KEY": env.Client.Key}[k]
	}
	err := run(context.Background(), args, getenv, strings.NewReader(""), &out, &errb)
	return out.String() + errb.String(), err
}

func TestCLI(t *testing.T) {
	env := svctest.New(t, svctest.Options{})
	img := env.Push("test/sleeper", svctest.Sleeper())

	out, err := svc(t, env, "templates", "create", "sleeper", img.Ref, "--description", "naps")
	if err != nil || !strings.Contains(out, "sleeper") || !strings.Contains(out, "workspace") {
		t.Fatalf("templates create: %v\n%s", err, out)
	}
	out, err = svc(t, env, "templates", "list")
	if err != nil || !strings.Contains(out, "svc-general-small") || !strings.Contains(out, "sleeper") {
		t.Fatalf("templates list: %v\n%s", err, out)
	}

	out, err = svc(t, env, "--json", "instances", "create", "-t", "sleeper", "--name", "cli", "-e", "GREETING=hello", "--disk", "2")
	if err != nil {
		t.Fatalf("instances create: %v\n%s", err, out)
	}
	var in sdk.Instance
	if err := json.Unmarshal([]byte(out), &in); err != nil || in.Status != "running" || *in.Name != "cli" || in.Resources.Disk != 2 {
		t.Fatalf("created %v %s", err, out)
	}
	out, err = svc(t, env, "instances", "list")
	if err != nil || !strings.Contains(out, in.ID) || !strings.Contains(out, "running") || !strings.HasPrefix(out, "ID") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	out, err = svc(t, env, "instances", "exec", in.ID, "--", "sh", "-c", "echo $GREETING")
	if err != nil || out != "hello\n" {
		t.Fatalf("exec: %v %q", err, out)
	}
	if _, err := svc(t, env, "instances", "exec", in.ID, "--", "sh", "-c", "exit 4"); err != exitCode(4) {
		t.Fatalf("exec exit code: %v", err)
	}
	for _, op := range []string{"stop", "start", "restart"} {
		want := map[string]string{"stop": "stopped", "start": "running", "restart": "running"}[op]
		out, err = svc(t, env, "instances", op, in.ID)
		if err != nil || !strings.Contains(out, want) {
			t.Fatalf("%s: %v %q", op, err, out)
		}
	}
	out, err = svc(t, env, "instances", "open-url", in.ID, "--port", "8000", "--ttl", "10m")
	if err != nil || !strings.Contains(out, in.ID+"-8000.localhost") || !strings.Contains(out, "svc_token=") {
		t.Fatalf("open-url: %v %q", err, out)
	}
	out, err = svc(t, env, "instances", "logs", in.ID, "--tail", "5")
	if err != nil {
		t.Fatalf("logs: %v %q", err, out)
	}
	if _, err := svc(t, env, "instances", "get", "zzzzzzzzzz"); sdk.ErrorCode(err) != "not_found" {
		t.Fatalf("get unknown: %v", err)
	}
	out, err = svc(t, env, "instances", "delete", in.ID)
	if err != nil || !strings.Contains(out, "deleted") {
		t.Fatalf("delete: %v %q", err, out)
	}
	if _, err := svc(t, env, "--key", "sk_live_00000000000000000000000000000000", "instances", "list"); sdk.ErrorCode(err) != "unauthorized" {
		t.Fatalf("bad key: %v", err)
	}
}
