package e2e

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/svctest"
	"github.com/svc-dev/svc/sdk"
)

func TestLifecycleStateTable(t *testing.T) {
	env := svctest.New(t, svctest.Options{})
	ctx := context.Background()
	env.Template("sleeper", svctest.Sleeper(), 0)
	a, err := env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "sleeper", Name: ptr("a")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "sleeper", Name: ptr("b")})
	if err != nil {
		t.Fatal(err)
	}
	list, _ := env.Client.Instances(ctx)
	if len(list) != 2 || list[0].ID != b.ID || list[1].ID != a.ID {
		t.Fatalf("list is not newest first: %v", []string{list[0].ID, list[1].ID})
	}

	// running: start acks again; stop stops; stop again acks again.
	if ack, err := env.Client.StartInstance(ctx, a.ID); err != nil || ack != (sdk.Ack{ID: a.ID, Status: "running"}) {
		t.Fatalf("start running: %v %+v", err, ack)
	}
	for i := 0; i < 2; i++ {
		if ack, err := env.Client.StopInstance(ctx, a.ID); err != nil || ack != (sdk.Ack{ID: a.ID, Status: "stopped"}) {
			t.Fatalf("stop %d: %v %+v", i, err, ack)
		}
	}
	// stopped: restart is a wrong state; exec too.
	_, err = env.Client.RestartInstance(ctx, a.ID)
	wantCode(t, err, 400, "invalid_request")
	_, err = env.Client.Exec(ctx, a.ID, sdk.ExecRequest{Command: "true"})
	wantCode(t, err, 400, "invalid_request")
	if got, _ := env.Client.Instance(ctx, a.ID); got.Status != "stopped" {
		t.Fatalf("status %s", got.Status)
	}
	if ack, err := env.Client.StartInstance(ctx, a.ID); err != nil || ack.Status != "running" {
		t.Fatalf("start: %v %+v", err, ack)
	}
	// Bodies on lifecycle calls: an empty object is fine, fields are not.
	resp, _ := env.Client.Raw(ctx, "POST", "/v1/instances/"+a.ID+"/stop", []byte(`{"force":true}`))
	if resp.StatusCode != 400 {
		t.Fatalf("stop with a field: %d", resp.StatusCode)
	}
	resp.Body.Close()

	// Concurrent restarts: one proceeds, the others get try_again.
	var wg sync.WaitGroup
	results := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := env.Client.RestartInstance(ctx, b.ID)
			results <- err
		}()
	}
	wg.Wait()
	close(results)
	ok, busy := 0, 0
	for err := range results {
		switch {
		case err == nil:
			ok++
		case sdk.ErrorCode(err) == "try_again" && err.(*sdk.Error).Status == 409:
			busy++
		default:
			t.Fatalf("restart: %v", err)
		}
	}
	if ok < 1 || ok+busy != 4 {
		t.Fatalf("concurrent restarts: %d ok, %d try_again", ok, busy)
	}
	if got, _ := env.Client.Instance(ctx, b.ID); got.Status != "running" {
		t.Fatalf("after restarts: %s", got.Status)
	}

	// A failed instance cannot be stopped; it can be started again.
	if err := env.Client.DeleteInstance(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, env.Client.DeleteInstance(ctx, a.ID), 404, "not_found")
	_, err = env.Client.StopInstance(ctx, a.ID)
	wantCode(t, err, 404, "not_found")
}

func TestPatch(t *testing.T) {
	env := svctest.New(t, svctest.Options{})
	ctx := context.Background()
	env.Template("sleeper", svctest.Sleeper(), 0)
	in, err := env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "sleeper", Name: ptr("n"), User: ptr("u"), Metadata: json.RawMessage(`{"a":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	got, err := env.Client.UpdateInstance(ctx, in.ID, map[string]any{"name": "renamed", "auto_sleep": true, "idle_timeout_seconds": 300})
	if err != nil || *got.Name != "renamed" || !got.AutoSleep || got.IdleTimeoutSeconds != 300 || *got.User != "u" || string(got.Metadata) != `{"a":1}` {
		t.Fatalf("patch: %v %+v", err, got)
	}
	// null and empty values clear.
	got, err = env.Client.UpdateInstance(ctx, in.ID, map[string]any{"name": "", "user": nil, "metadata": map[string]any{}})
	if err != nil || got.Name != nil || got.User != nil || string(got.Metadata) != "null" {
		t.Fatalf("clear: %v name=%v user=%v meta=%s", err, got.Name, got.User, got.Metadata)
	}
	for _, bad := range []map[string]any{
		{}, {"name": strings.Repeat("x", 61)}, {"user": strings.Repeat("x", 201)},
		{"metadata": map[string]any{"k": strings.Repeat("m", 4097)}}, {"metadata": "str"},
		{"idle_timeout_seconds": 10}, {"idle_timeout_seconds": 90000}, {"auto_sleep": "yes"}, {"auto_sleep": nil},
		{"template": "x"}, {"env": map[string]string{"A": "b"}},
	} {
		_, err := env.Client.UpdateInstance(ctx, in.ID, bad)
		wantCode(t, err, 400, "invalid_request")
	}
	resp, _ := env.Client.Raw(ctx, "PATCH", "/v1/instances/"+in.ID, nil)
	if resp.StatusCode != 400 {
		t.Fatalf("empty body: %d", resp.StatusCode)
	}
	resp.Body.Close()
	_, err = env.Client.UpdateInstance(ctx, "zzzzzzzzzz", map[string]any{"name": "x"})
	wantCode(t, err, 404, "not_found")
}

func TestExecLogsMetrics(t *testing.T) {
	env := svctest.New(t, svctest.Options{})
	ctx := context.Background()
	opts := svctest.Sleeper()
	opts.Cmd = []string{"/bin/sh", "-c", "echo hello console; i=0; while true; do i=$((i+1)); echo tick $i; sleep 0.2; done"}
	env.Template("ticker", opts, 0)
	in, err := env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "ticker"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := env.Client.Exec(ctx, in.ID, sdk.ExecRequest{Command: []any{"sh", "-c", "echo out; echo err >&2; exit 7"}})
	if err != nil || res.ExitCode != 7 || res.Stdout != "out\n" || res.Stderr != "err\n" || res.Truncated {
		t.Fatalf("argv exec: %v %+v", err, res)
	}
	res, err = env.Client.Exec(ctx, in.ID, sdk.ExecRequest{Command: "pwd; echo $X", Cwd: "/tmp", Env: map[string]string{"X": "y"}})
	if err != nil || res.Stdout != "/tmp\ny\n" {
		t.Fatalf("cwd/env: %v %+v", err, res)
	}
	res, err = env.Client.Exec(ctx, in.ID, sdk.ExecRequest{Command: "head -c 1000000 /dev/zero | tr '\\0' a"})
	if err != nil || !res.Truncated || len(res.Stdout)+len(res.Stderr) != 512<<10 {
		t.Fatalf("cap: %v truncated=%v len=%d", err, res.Truncated, len(res.Stdout))
	}
	res, err = env.Client.Exec(ctx, in.ID, sdk.ExecRequest{Command: "echo before; sleep 30", TimeoutSeconds: 1})
	if err != nil || !res.TimedOut || res.ExitCode != -1 || res.Stdout != "before\n" {
		t.Fatalf("timeout: %v %+v", err, res)
	}
	for _, bad := range []sdk.ExecRequest{{}, {Command: ""}, {Command: []any{}}, {Command: []any{1}}, {Command: "x", Cwd: "rel"}, {Command: "x", TimeoutSeconds: -1}} {
		_, err := env.Client.Exec(ctx, in.ID, bad)
		wantCode(t, err, 400, "invalid_request")
	}

	time.Sleep(time.Second)
	rc, err := env.Client.Logs(ctx, in.ID, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "tick ") {
		t.Fatalf("tail 2: %q", b)
	}
	rc, _ = env.Client.Logs(ctx, in.ID, 0, false)
	b, _ = io.ReadAll(rc)
	rc.Close()
	if !strings.HasPrefix(string(b), "hello console\n") {
		t.Fatalf("all logs start %q", b[:min(len(b), 40)])
	}
	// Follow streams new lines as they are printed.
	fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rc, err = env.Client.Logs(fctx, in.ID, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	seen := ""
	for strings.Count(seen, "tick") < 4 {
		n, err := rc.Read(buf)
		if err != nil {
			t.Fatalf("follow ended after %q: %v", seen, err)
		}
		seen += string(buf[:n])
	}
	rc.Close()

	m, err := env.Client.Metrics(ctx, in.ID)
	if err != nil || m.Memory.UsedBytes <= 0 || m.Memory.LimitBytes != 4<<30 || m.Disk.TotalBytes <= 0 || m.CPU.Limit != 2 || m.At == 0 {
		t.Fatalf("metrics: %v %+v", err, m)
	}
}
