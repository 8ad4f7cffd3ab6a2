package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/modeltest"
)

func shellCall(command string, timeout float64) modeltest.ToolCall {
	a := map[string]any{"command": command}
	if timeout > 0 {
		a["timeout_seconds"] = timeout
	}
	return modeltest.ToolCall{Name: "shell", Arguments: args(a)}
}

func TestShellRunsInTheWorkspace(t *testing.T) {
	a, srv := setup(t, modeltest.Config{}, nil)
	srv.Script(modeltest.Reply{ToolCalls: []modeltest.ToolCall{
		shellCall("pwd; echo out; echo err >&2", 0),
		shellCall("exit 3", 0),
	}}, modeltest.Reply{Content: "ok"})
	_, rec, err := run(t, a, Request{Model: "m", Messages: user("x")})
	if err != nil {
		t.Fatal(err)
	}
	results := toolResults(srv.Requests()[1])
	if want := a.Workspace() + "\nout\nerr\n\n[exit code 0]"; results[0] != want {
		t.Fatalf("result %q, want %q", results[0], want)
	}
	if !strings.HasSuffix(results[1], "[exit code 3]") {
		t.Fatalf("result %q", results[1])
	}
	started := rec.waitFor(t, func(e harness.Event) bool { return e.Name == harness.ToolCallStarted })
	if started.Data["label"] != "Running: pwd; echo out; echo err >&2" {
		t.Fatalf("label %q", started.Data["label"])
	}
	failed := rec.waitFor(t, func(e harness.Event) bool { return e.Name == harness.ToolCallFailed })
	if failed.Data["tool"] != "shell" || failed.Data["error"] != "exit code 3" {
		t.Fatalf("failed %v", failed.Data)
	}
}

func TestShellTimeoutAndOutputCap(t *testing.T) {
	a, srv := setup(t, modeltest.Config{}, func(c *Config) { c.ShellOutputCap = 1000; c.Grace = 100 * time.Millisecond })
	srv.Script(modeltest.Reply{ToolCalls: []modeltest.ToolCall{
		shellCall("echo before; echo $$ > sleeper.pid; exec sleep 30", 3),
		shellCall("seq 1 100000", 0),
	}}, modeltest.Reply{Content: "ok"})
	_, rec, err := run(t, a, Request{Model: "m", Messages: user("x")})
	if err != nil {
		t.Fatal(err)
	}
	results := toolResults(srv.Requests()[1])
	if !strings.HasPrefix(results[0], "before\n") || !strings.Contains(results[0], "[killed: timed out after 3s]") {
		t.Fatalf("timeout result %q", results[0])
	}
	failed := rec.waitFor(t, func(e harness.Event) bool { return e.Name == harness.ToolCallFailed })
	if failed.Data["error"] != "timed out after 3s" {
		t.Fatalf("failed %v", failed.Data)
	}
	pid := readPidFile(t, filepath.Join(a.Workspace(), "sleeper.pid"))
	if processAlive(pid) {
		t.Fatalf("timed-out command %d still running", pid)
	}
	capped := results[1]
	if !strings.HasPrefix(capped, "1\n2\n3\n") || !strings.Contains(capped, "100000\n") || !strings.Contains(capped, "bytes omitted") {
		t.Fatalf("capped output lacks head, tail or marker: %q", capped)
	}
	if !strings.Contains(capped, "[output truncated: 588895 bytes total]") || len(capped) > 1200 {
		t.Fatalf("capped output (%d bytes) %q", len(capped), capped)
	}
}

func readPidFile(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// processAlive reports whether pid is a running, non-zombie process.
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] != 'Z'
}

func TestCancelMidToolKillsTheCommand(t *testing.T) {
	a, srv := setup(t, modeltest.Config{}, nil)
	srv.Script(modeltest.Reply{Content: "Sleeping.", ToolCalls: []modeltest.ToolCall{
		shellCall("sleep 300 & echo $! > child.pid; echo $$ > shell.pid; sleep 30", 0),
		shellCall("echo never > never.txt", 0),
	}})
	rec := newRecorder()
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		out Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := a.Run(ctx, Request{Model: "m", Messages: user("sleep")}, rec.emit)
		done <- result{out, err}
	}()
	rec.waitFor(t, func(e harness.Event) bool { return e.Name == harness.ToolCallStarted })
	shellPid := waitPidFile(t, filepath.Join(a.Workspace(), "shell.pid"))
	childPid := waitPidFile(t, filepath.Join(a.Workspace(), "child.pid"))
	cancel()
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second): // hang guard: a sleep 30 must not be waited out
		t.Fatal("Run did not return after cancel")
	}
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", r.err)
	}
	if r.out.Output != "Sleeping." {
		t.Fatalf("output so far %q", r.out.Output)
	}
	if processAlive(shellPid) || processAlive(childPid) {
		t.Fatalf("processes survived the cancel: shell %v, background child %v", processAlive(shellPid), processAlive(childPid))
	}
	if _, err := os.Stat(filepath.Join(a.Workspace(), "never.txt")); err == nil {
		t.Fatal("the second call ran after cancel")
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d model calls after cancel", n)
	}
	// Every call in the trace has a result, so the transcript replays.
	var calls, results int
	for _, m := range r.out.Trace {
		calls += len(m.ToolCalls)
		if m.Role == "tool" {
			results++
		}
	}
	if calls != 2 || results != 2 {
		t.Fatalf("trace has %d calls and %d results", calls, results)
	}
}

func waitPidFile(t *testing.T, path string) int {
	t.Helper()
	for range 1000 {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			return readPidFile(t, path)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never written", path)
	return 0
}

func TestCancelDuringModelStream(t *testing.T) {
	a, srv := setup(t, modeltest.Config{}, nil)
	hold := make(chan struct{}) // never closed: the reply stalls after its reasoning
	srv.Script(modeltest.Reply{Reasoning: "pondering", Content: "never sent", Wait: hold})
	rec := newRecorder()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var out Outcome
	go func() {
		var err error
		out, err = a.Run(ctx, Request{Model: "m", Messages: user("x")}, rec.emit)
		done <- err
	}()
	rec.waitFor(t, func(e harness.Event) bool { return e.Name == harness.ReasoningDelta })
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if out.Reasoning == "" || out.Output != "" {
		t.Fatalf("outcome %+v", out)
	}
}

func TestWebFetch(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<!doctype html><html><head><title>Quarterly Report</title><style>body{color:red}</style>
<script>var secret = "do not show";</script></head><body><h1>Results</h1><p>Revenue   grew
by <b>12%</b>.</p><p>See <a href="/details">the details</a>.</p><noscript>enable js</noscript></body></html>`)
		case "/data.json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"ok":true}`)
		case "/big":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, strings.Repeat("a", 5000))
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	a, srv := setup(t, modeltest.Config{}, func(c *Config) { c.FetchMaxBytes = 1000 })
	srv.Script(modeltest.Reply{ToolCalls: []modeltest.ToolCall{
		{Name: "web_fetch", Arguments: args(map[string]string{"url": site.URL + "/page"})},
		{Name: "web_fetch", Arguments: args(map[string]string{"url": site.URL + "/data.json"})},
		{Name: "web_fetch", Arguments: args(map[string]string{"url": site.URL + "/big"})},
		{Name: "web_fetch", Arguments: args(map[string]string{"url": site.URL + "/missing"})},
		{Name: "web_fetch", Arguments: args(map[string]string{"url": "file:///etc/passwd"})},
	}}, modeltest.Reply{Content: "ok"})
	_, rec, err := run(t, a, Request{Model: "m", Messages: user("x")})
	if err != nil {
		t.Fatal(err)
	}
	r := toolResults(srv.Requests()[1])
	if want := "Quarterly Report\n\nResults\nRevenue grew by 12%.\nSee the details (/details)."; r[0] != want {
		t.Errorf("page text %q, want %q", r[0], want)
	}
	if r[1] != `{"ok":true}` {
		t.Errorf("json %q", r[1])
	}
	if !strings.HasPrefix(r[2], strings.Repeat("a", 1000)+"\n[truncated") || strings.Contains(r[2], strings.Repeat("a", 1001)) {
		t.Errorf("big %q", r[2])
	}
	if !strings.HasPrefix(r[3], "HTTP 404") || !strings.HasPrefix(r[4], "Error: not an http(s) URL") {
		t.Errorf("errors %q %q", r[3], r[4])
	}
	started := rec.waitFor(t, func(e harness.Event) bool { return e.Name == harness.ToolCallStarted })
	if started.Data["label"] != "Fetching "+site.URL+"/page" {
		t.Errorf("label %v", started.Data["label"])
	}
}

func TestDelegateRunsSubagentsConcurrently(t *testing.T) {
	purpose := func(r modeltest.Request) string { return r.Header.Get(harness.PurposeHeader) }
	// The parent's final answer quotes the delegate_task result it got.
	final := func(r modeltest.Request) modeltest.Reply {
		res := toolResults(r)
		if len(res) == 0 {
			return modeltest.Reply{Content: "no results"}
		}
		return modeltest.Reply{Content: "Combined: " + res[len(res)-1]}
	}
	a, srv := setup(t, modeltest.Config{Fallback: final}, nil)
	// alpha's answer waits until beta's request has arrived, so the test
	// only passes when both subagents run at the same time.
	betaArrived := make(chan struct{})
	var once sync.Once
	srv.Script(
		modeltest.Reply{Match: func(r modeltest.Request) bool { return purpose(r) == "" },
			ToolCalls: []modeltest.ToolCall{{Name: "delegate_task", Arguments: args(map[string]any{
				"tasks": []string{"count the alpha files", "count the beta files"}, "context": "the repo is small"})}}},
		modeltest.Reply{Match: func(r modeltest.Request) bool {
			return purpose(r) == "subagent" && strings.Contains(r.LastUser(), "alpha") && len(toolResults(r)) == 0
		}, ToolCalls: []modeltest.ToolCall{{Name: "shell", Arguments: args(map[string]string{"command": "echo alpha-probe"})}}},
		modeltest.Reply{Match: func(r modeltest.Request) bool {
			return purpose(r) == "subagent" && strings.Contains(r.LastUser(), "alpha") && len(toolResults(r)) == 1
		}, Content: "alpha has 3 files", Wait: betaArrived},
		modeltest.Reply{Match: func(r modeltest.Request) bool {
			ok := purpose(r) == "subagent" && strings.Contains(r.LastUser(), "beta")
			if ok {
				once.Do(func() { close(betaArrived) })
			}
			return ok
		}, Content: "beta has 5 files"},
	)
	out, rec, err := run(t, a, Request{Model: "m", Messages: user("count files")})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"alpha has 3 files", "beta has 5 files", "Subagent 1: count the alpha files", "Subagent 2: count the beta files"} {
		if !strings.Contains(out.Output, want) {
			t.Fatalf("final answer %q lacks %q", out.Output, want)
		}
	}
	// Only the parent's own events: nothing between delegate's started
	// and completed, not even the subagent's shell call.
	names := rec.names()
	want := []string{harness.ToolCallGenerating, harness.ToolCallStarted, harness.ToolCallCompleted, harness.OutputTextDelta}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("parent events %v", names)
	}
	if l := rec.all()[1].Data["label"]; l != "Delegating 2 tasks" {
		t.Fatalf("label %v", l)
	}
	var sub int
	for _, r := range srv.Requests() {
		if purpose(r) != "subagent" {
			continue
		}
		sub++
		for _, n := range r.ToolNames() {
			if n == "delegate_task" {
				t.Fatal("subagents are offered delegate_task")
			}
		}
		if !strings.Contains(r.LastUser(), "the repo is small") || r.Model != "m" {
			t.Fatalf("subagent request %+v", r)
		}
	}
	if sub != 3 {
		t.Fatalf("%d subagent model calls, want 3", sub)
	}
	// Usage counts the subagents' calls too.
	if out.Usage == nil || out.Steps != 2 {
		t.Fatalf("usage %+v steps %d", out.Usage, out.Steps)
	}
}

func TestCancelStopsSubagents(t *testing.T) {
	a, srv := setup(t, modeltest.Config{}, nil)
	srv.Script(
		modeltest.Reply{Match: func(r modeltest.Request) bool { return r.Header.Get(harness.PurposeHeader) == "" },
			ToolCalls: []modeltest.ToolCall{{Name: "delegate_task", Arguments: args(map[string]any{"tasks": []string{"sleep"}})}}},
		modeltest.Reply{ToolCalls: []modeltest.ToolCall{shellCall("echo $$ > sub.pid; exec sleep 30", 0)}},
	)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := a.Run(ctx, Request{Model: "m", Messages: user("x")}, discard)
		done <- err
	}()
	pid := waitPidFile(t, filepath.Join(a.Workspace(), "sub.pid"))
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if processAlive(pid) {
		t.Fatalf("subagent's command %d survived", pid)
	}
}
