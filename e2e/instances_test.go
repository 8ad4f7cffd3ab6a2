package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/svctest"
	"github.com/svc-dev/svc/internal/testimage"
	"github.com/svc-dev/svc/sdk"
)

func TestCreateValidation(t *testing.T) {
	env := svctest.New(t, svctest.Options{})
	ctx := context.Background()
	env.Template("sleeper", svctest.Sleeper(), 0)

	bigEnv := map[string]string{}
	for i := 0; i < 65; i++ {
		bigEnv[fmt.Sprintf("V%d", i)] = "x"
	}
	hugeEnv := map[string]string{}
	for i := 0; i < 17; i++ {
		hugeEnv[fmt.Sprintf("V%d", i)] = strings.Repeat("x", 4000)
	}
	cases := []struct {
		name string
		req  sdk.CreateInstance
	}{
		{"latest", sdk.CreateInstance{Template: "sleeper@latest"}},
		{"unpublished revision", sdk.CreateInstance{Template: "sleeper@2"}},
		{"bad revision", sdk.CreateInstance{Template: "sleeper@x"}},
		{"unknown template", sdk.CreateInstance{Template: "nope"}},
		{"unknown system", sdk.CreateInstance{Template: "svc-nope"}},
		{"unpublished system tag", sdk.CreateInstance{Template: "svc-general@2001-01-01"}},
		{"direct image", sdk.CreateInstance{Template: "docker.io/library/busybox:latest"}},
		{"direct image 2", sdk.CreateInstance{Template: env.Source + "/test/sleeper"}},
		{"bad shape", sdk.CreateInstance{Template: "sleeper", Resources: &sdk.Resources{CPU: 2, Memory: 8}}},
		{"bad shape 2", sdk.CreateInstance{Template: "sleeper", Resources: &sdk.Resources{CPU: 3, Memory: 4}}},
		{"disk too big", sdk.CreateInstance{Template: "sleeper", Resources: &sdk.Resources{CPU: 2, Memory: 4, Disk: 5000}}},
		{"bad type", sdk.CreateInstance{Template: "sleeper", Type: "turbo"}},
		{"too many env", sdk.CreateInstance{Template: "sleeper", Env: bigEnv}},
		{"env too large", sdk.CreateInstance{Template: "sleeper", Env: hugeEnv}},
		{"env lowercase", sdk.CreateInstance{Template: "sleeper", Env: map[string]string{"lower": "x"}}},
		{"env leading digit", sdk.CreateInstance{Template: "sleeper", Env: map[string]string{"1X": "x"}}},
		{"env long value", sdk.CreateInstance{Template: "sleeper", Env: map[string]string{"X": strings.Repeat("y", 4097)}}},
		{"env reserved", sdk.CreateInstance{Template: "sleeper", Env: map[string]string{"SVC_INSTANCE_ID": "x"}}},
		{"env reserved 2", sdk.CreateInstance{Template: "sleeper", Env: map[string]string{"ALT_CONTROL_UI_INSTANCE_ORIGIN": "x"}}},
		{"idle too short", sdk.CreateInstance{Template: "sleeper", IdleTimeoutSeconds: ptr(299)}},
		{"idle too long", sdk.CreateInstance{Template: "sleeper", IdleTimeoutSeconds: ptr(86401)}},
		{"name too long", sdk.CreateInstance{Template: "sleeper", Name: ptr(strings.Repeat("n", 61))}},
		{"user too long", sdk.CreateInstance{Template: "sleeper", User: ptr(strings.Repeat("u", 201))}},
		{"metadata not object", sdk.CreateInstance{Template: "sleeper", Metadata: json.RawMessage(`[1]`)}},
		{"metadata too large", sdk.CreateInstance{Template: "sleeper", Metadata: json.RawMessage(`{"k":"` + strings.Repeat("m", 4100) + `"}`)}},
		{"reserved public port", sdk.CreateInstance{Template: "sleeper", PublicPorts: []sdk.PortRequest{{Port: 3737}}}},
		{"public port range", sdk.CreateInstance{Template: "sleeper", PublicPorts: []sdk.PortRequest{{Port: 0}}}},
		{"bad prefix", sdk.CreateInstance{Template: "sleeper", PublicPorts: []sdk.PortRequest{{Port: 9000, Prefix: ptr("-x")}}}},
		{"long prefix", sdk.CreateInstance{Template: "sleeper", PublicPorts: []sdk.PortRequest{{Port: 9000, Prefix: ptr(strings.Repeat("p", 31))}}}},
		{"budget negative", sdk.CreateInstance{Template: "sleeper", Budget: &sdk.Budget{MonthlyCapMicros: -1}}},
	}
	for _, c := range cases {
		_, err := env.Client.CreateInstance(ctx, c.req)
		e, ok := err.(*sdk.Error)
		if !ok || e.Status != 400 || e.Code != "invalid_request" {
			t.Errorf("%s: want 400 invalid_request, got %v", c.name, err)
		}
	}
	_, err := env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "sleeper", Resources: &sdk.Resources{CPU: 4, Memory: 4}})
	if e, _ := err.(*sdk.Error); e == nil || !strings.Contains(e.Message, "2/4") || !strings.Contains(e.Message, "8/16") {
		t.Errorf("invalid shape should list valid shapes: %v", err)
	}
	_, err = env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "sleeper", Type: "performance"})
	wantCode(t, err, 403, "performance_unavailable")
	_, err = env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "sleeper",
		PublicPorts: []sdk.PortRequest{{Port: 9000}, {Port: 9000}}})
	wantCode(t, err, 409, "public_port_exists")
	for _, raw := range []string{`{"template":"sleeper","colour":1}`, `{"template":5}`, `{"resources":{"cpu":2.5}}`, `{"env":{"A":1}}`, `[`} {
		resp, _ := env.Client.Raw(ctx, "POST", "/v1/instances", []byte(raw))
		if m := body(t, resp); resp.StatusCode != 400 || m["error"].(map[string]any)["code"] != "invalid_request" {
			t.Errorf("%s: %d %v", raw, resp.StatusCode, m)
		}
	}
	// Nothing was provisioned by any refused create.
	if list, _ := env.Client.Instances(ctx); len(list) != 0 {
		t.Fatalf("refused creates left %d instances", len(list))
	}
}

func TestEmptyCreateWithoutSystemImage(t *testing.T) {
	env := svctest.New(t, svctest.Options{})
	ctx := context.Background()
	resp, err := env.Client.Raw(ctx, "POST", "/v1/instances", nil)
	if err != nil {
		t.Fatal(err)
	}
	m := body(t, resp)
	e, _ := m["error"].(map[string]any)
	if resp.StatusCode != 502 || e["code"] != "provisioning_failed" || !strings.Contains(fmt.Sprint(e["message"]), "make images") {
		t.Fatalf("empty create without images: %d %v", resp.StatusCode, m)
	}
	list, _ := env.Client.Instances(ctx)
	if len(list) != 1 {
		t.Fatalf("%d instances", len(list))
	}
	in := list[0]
	if in.Status != "failed" || in.Template != "svc-general" || in.Resources != (sdk.Resources{CPU: 2, Memory: 4, Disk: 4}) ||
		in.StatusReason == nil || in.StatusReason.Code != "provisioning_failed" || in.StatusReason.Operation != "create" {
		t.Fatalf("failed instance: %+v %+v", in, in.StatusReason)
	}
	if len(in.PublicPorts) != 1 || in.PublicPorts[0].Port != 8443 || *in.PublicPorts[0].Label != "messenger" {
		t.Fatalf("messenger port: %+v", in.PublicPorts)
	}
}

func TestCreateRunsContainerAsAsked(t *testing.T) {
	env := svctest.New(t, svctest.Options{})
	ctx := context.Background()
	opts := svctest.Sleeper()
	opts.Files = append(opts.Files, testimage.File{Path: "/home/node/seeded.txt", Content: []byte("from the image\n")})
	env.Template("sleeper", opts, 0)
	meta := json.RawMessage(`{"team":"a","n":1}`)
	in, err := env.Client.CreateInstance(ctx, sdk.CreateInstance{
		Template: "sleeper", Name: ptr("box"), User: ptr("u-1"), Metadata: meta,
		Env:       map[string]string{"GREETING": "hi there", "EMPTY": ""},
		Resources: &sdk.Resources{Disk: 2}, AutoSleep: ptr(true), IdleTimeoutSeconds: ptr(600),
		PublicPorts: []sdk.PortRequest{{Port: 9000, Prefix: ptr("api"), Label: ptr("my api")}, {Port: 9001}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.ID) != 10 || strings.ToLower(in.ID) != in.ID || in.Status != "running" || in.Template != "sleeper" ||
		in.TemplateRevision == nil || *in.TemplateRevision != 1 || in.Resources != (sdk.Resources{CPU: 2, Memory: 4, Disk: 2}) ||
		*in.Name != "box" || *in.User != "u-1" || !in.AutoSleep || in.IdleTimeoutSeconds != 600 || in.Type != "default" ||
		in.URL != strings.Replace(env.Server.URL, "localhost", in.ID+".localhost", 1) || in.StatusReason != nil || in.SleptAt != nil {
		t.Fatalf("created %+v", in)
	}
	var gotMeta map[string]any
	json.Unmarshal(in.Metadata, &gotMeta)
	if gotMeta["team"] != "a" || len(in.PublicPorts) != 2 {
		t.Fatalf("metadata %s ports %+v", in.Metadata, in.PublicPorts)
	}
	if p := in.PublicPorts[0]; p.Port != 9000 || !strings.HasPrefix(p.URL, "http://api-"+in.ID+".localhost:") || *p.Label != "my api" {
		t.Fatalf("prefixed port %+v", p)
	}
	if p := in.PublicPorts[1]; p.Prefix != nil || len(strings.SplitN(strings.TrimPrefix(p.URL, "http://"), ".", 2)[0]) != 20 {
		t.Fatalf("slug port %+v", p)
	}
	sh := func(cmd string) string {
		t.Helper()
		res, err := env.Client.Exec(ctx, in.ID, sdk.ExecRequest{Command: cmd})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("exec %q: %v %+v", cmd, err, res)
		}
		return strings.TrimSpace(res.Stdout)
	}
	// Platform env and the user's env.
	if got := sh(`echo "$SVC_INSTANCE_ID|$GREETING|$SVC_GATEWAY_PORT|${EMPTY-unset}"`); got != in.ID+"|hi there|3737|" {
		t.Fatalf("env: %q", got)
	}
	if got := sh(`echo $SVC_RUNTIME_IMAGE_REF`); !strings.HasSuffix(got, "@"+*in.ImageDigest) {
		t.Fatalf("SVC_RUNTIME_IMAGE_REF %q", got)
	}
	// The shape's limits (cgroup v1 or v2).
	if mem := sh(`cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max`); mem != fmt.Sprint(4<<30) {
		t.Fatalf("memory limit %q", mem)
	}
	// The disk is a real quota of 2 GB mounted at the homes, seeded from
	// the image.
	if got := sh(`cat /home/node/seeded.txt`); got != "from the image" {
		t.Fatalf("seeded home: %q", got)
	}
	res, err := env.Client.Exec(ctx, in.ID, sdk.ExecRequest{Command: "dd if=/dev/zero of=/home/fill bs=1M count=3000 2>&1; echo rc=$?", TimeoutSeconds: 120})
	if err != nil || !strings.Contains(res.Stdout, "No space left") {
		t.Fatalf("quota: %v %+v", err, res)
	}
	sh("rm /home/fill && echo kept > /home/node/note && echo os > /etc/os-note")

	// Files on the disk and in the OS layer persist across stop/start and
	// restart; the env is replayed.
	if ack, err := env.Client.StopInstance(ctx, in.ID); err != nil || ack.Status != "stopped" {
		t.Fatalf("stop: %v %+v", err, ack)
	}
	if ack, err := env.Client.StartInstance(ctx, in.ID); err != nil || ack.Status != "running" {
		t.Fatalf("start: %v %+v", err, ack)
	}
	if ack, err := env.Client.RestartInstance(ctx, in.ID); err != nil || ack.Status != "running" {
		t.Fatalf("restart: %v %+v", err, ack)
	}
	if got := sh(`cat /home/node/note /etc/os-note; echo $GREETING`); got != "kept\nos\nhi there" {
		t.Fatalf("after stop/start/restart: %q", got)
	}
}

func TestBootProbe(t *testing.T) {
	env := svctest.New(t, svctest.Options{BootTimeout: 3 * time.Second})
	ctx := context.Background()

	env.Template("web", svctest.HTTPServer(8000), 8000)
	in, err := env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "web"})
	if err != nil || in.Status != "running" {
		t.Fatalf("web: %v %+v", err, in)
	}

	// A container that exits fails the create with its console tail,
	// redacted, kept in status_reason.
	env.Template("crash", testimage.Options{Cmd: []string{"/bin/sh", "-c",
		"echo booting; echo 'reached 10.1.2.3 and fe80::1 at " + env.DataDir + "/secret'; exit 3"}}, 8000)
	_, err = env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "crash"})
	wantCode(t, err, 502, "provisioning_failed")
	detail := err.(*sdk.Error).Detail
	if !strings.Contains(detail, "booting") || strings.Contains(detail, "10.1.2.3") || strings.Contains(detail, "fe80::1") || strings.Contains(detail, env.DataDir) {
		t.Fatalf("detail: %q", detail)
	}
	list, _ := env.Client.Instances(ctx)
	failed := list[0]
	if failed.Status != "failed" || failed.StatusReason == nil || failed.StatusReason.Detail != detail || failed.StatusReason.Operation != "create" {
		t.Fatalf("failed instance %+v", failed)
	}

	// A container that never opens its port fails too.
	env.Template("deaf", testimage.Options{Cmd: []string{"/bin/sh", "-c", "echo listening nowhere; exec sleep 1000"}}, 8000)
	_, err = env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "deaf"})
	wantCode(t, err, 502, "provisioning_failed")
	if d := err.(*sdk.Error).Detail; !strings.Contains(d, "listening nowhere") {
		t.Fatalf("deaf detail %q", d)
	}
	// Long console output is cut to its last 2000 characters.
	env.Template("chatty", testimage.Options{Cmd: []string{"/bin/sh", "-c", "i=0; while [ $i -lt 300 ]; do echo line $i of noise; i=$((i+1)); done; exit 1"}}, 8000)
	_, err = env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "chatty"})
	if d := err.(*sdk.Error).Detail; len([]rune(d)) != 2000 || !strings.Contains(d, "line 299 of noise") {
		t.Fatalf("chatty detail: %d chars", len(d))
	}
}
