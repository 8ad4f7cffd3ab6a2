package e2e

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/runtime"
	"github.com/svc-dev/svc/internal/svctest"
	"github.com/svc-dev/svc/sdk"
)

// gate holds the next sleep at its checkpoint until released, so a test
// can look at an instance while its checkpoint is being written.
type gate struct {
	mu      sync.Mutex
	armed   bool
	reached chan struct{}
	release chan struct{}
}

func (g *gate) arm() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed, g.reached, g.release = true, make(chan struct{}), make(chan struct{})
}

// open lets a held sleep finish (a failing test must not leave svcd's
// watcher blocked at shutdown).
func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.release != nil {
		select {
		case <-g.release:
		default:
			close(g.release)
		}
	}
	g.armed = false
}

func (g *gate) hook(name string) {
	if name != "sleep.checkpoint" {
		return
	}
	g.mu.Lock()
	armed, reached, release := g.armed, g.reached, g.release
	g.armed = false
	g.mu.Unlock()
	if armed {
		close(reached)
		<-release
	}
}

// settled retries a lifecycle call while it answers 409 try_again: right
// after the status reads sleeping the checkpoint is still being written,
// and the spec asks clients to retry with backoff.
func settled(t *testing.T, call func() error) error {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := call()
		if sdk.ErrorCode(err) != "try_again" || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// boots counts the test application's starts in the console log.
func boots(t *testing.T, env *svctest.Env, id string) int {
	t.Helper()
	rc, err := env.Client.Logs(context.Background(), id, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return strings.Count(string(b), "boot pid=")
}

func TestSleepAndWake(t *testing.T) {
	g := &gate{}
	env := svctest.New(t, svctest.Options{MinIdleTimeout: 1, WakeTimeout: time.Minute, Failpoint: g.hook})
	t.Cleanup(g.open) // runs before svcd's own cleanup
	ctx := context.Background()
	env.Template("web", svctest.WebApp(8000, 9000), 8000)
	in, err := env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "web", AutoSleep: ptr(true),
		IdleTimeoutSeconds: ptr(2), PublicPorts: []sdk.PortRequest{{Port: 9000}}})
	if err != nil {
		t.Fatal(err)
	}
	hc := plainClient()
	key := map[string]string{"X-Svc-Key": env.Client.Key}
	public := in.PublicPorts[0].URL

	// Bytes flowing keep it awake: an SSE event every 300 ms for 5 s,
	// more than twice the idle timeout.
	streamCtx, stopStream := context.WithCancel(ctx)
	req, _ := http.NewRequestWithContext(streamCtx, "GET", in.URL+"/sse?gap=300ms", nil)
	req.Header.Set("X-Svc-Key", env.Client.Key)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data:") {
				events <- sc.Text()
			}
		}
		close(events)
	}()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); {
		<-events
		if got, _ := env.Client.Instance(ctx, in.ID); got.Status != "running" {
			t.Fatalf("instance went %s while data flowed", got.Status)
		}
	}
	stopStream()
	resp.Body.Close()

	// An open but silent connection does not: the instance sleeps under it.
	silentCtx, stopSilent := context.WithCancel(ctx)
	defer stopSilent()
	req, _ = http.NewRequestWithContext(silentCtx, "GET", in.URL+"/sse?gap=1h", nil)
	req.Header.Set("X-Svc-Key", env.Client.Key)
	silent, err := hc.Do(req)
	if err != nil || silent.StatusCode != 200 {
		t.Fatalf("silent stream: %v", err)
	}
	defer silent.Body.Close()
	asleep := waitStatus(t, env, in.ID, "sleeping", 30*time.Second)
	if asleep.SleptAt == nil || *asleep.SleptAt < in.Created {
		t.Fatalf("slept_at %v", asleep.SleptAt)
	}
	// The status flips as the checkpoint starts; the container stops
	// (CPU and memory released) when it is written.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		st, err := env.Server.Runtime.Inspect(ctx, in.ID)
		if err != nil {
			t.Fatal(err)
		}
		if st.State != runtime.Running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a sleeping instance's container still runs: %+v", st)
		}
	}
	// The reconciler leaves a sleeping instance with a stopped container alone.
	if err := env.Server.Instances.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := env.Client.Instance(ctx, in.ID); got.Status != "sleeping" {
		t.Fatalf("reconciler moved a sleeping instance to %s", got.Status)
	}
	if n := boots(t, env, in.ID); n != 1 {
		t.Fatalf("%d boots before any wake", n)
	}

	// Many concurrent requests: every one is answered, one wake runs.
	wakes := env.Server.Instances.Wakes()
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			u := in.URL + "/"
			if i%2 == 1 {
				u = public + "/"
			}
			code, b, _ := fetch(t, hc, "GET", u, key, nil)
			if code != 200 || !strings.HasPrefix(b, "hello from port") {
				errs <- b
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for b := range errs {
		t.Errorf("held request answered %q", b)
	}
	if d := env.Server.Instances.Wakes() - wakes; d != 1 {
		t.Fatalf("%d wakes for 64 concurrent requests", d)
	}
	if n := boots(t, env, in.ID); n != 2 {
		t.Fatalf("%d boots after one wake", n)
	}
	if got, _ := env.Client.Instance(ctx, in.ID); got.Status != "running" || got.SleptAt != nil {
		t.Fatalf("after the wake: %s %v", got.Status, got.SleptAt)
	}

	// A public URL wakes it alone.
	waitStatus(t, env, in.ID, "sleeping", 30*time.Second)
	if code, b, _ := fetch(t, hc, "GET", public+"/", nil, nil); code != 200 || b != "hello from port 9000\n" {
		t.Fatalf("public wake: %d %q", code, b)
	}
	// A signed URL minted while it sleeps wakes it when a browser opens it.
	waitStatus(t, env, in.ID, "sleeping", 30*time.Second)
	su, err := env.Client.SignedURL(ctx, in.ID, sdk.SignedURLRequest{Port: ptr(9000)})
	if err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Transport: sdk.Transport(), Jar: jar}
	if code, b, _ := fetch(t, browser, "GET", su.URL, nil, nil); code != 200 || b != "hello from port 9000\n" {
		t.Fatalf("signed URL of a sleeping instance: %d %q", code, b)
	}
	// Exec wakes it.
	waitStatus(t, env, in.ID, "sleeping", 30*time.Second)
	var res sdk.ExecResult
	err = settled(t, func() (err error) {
		res, err = env.Client.Exec(ctx, in.ID, sdk.ExecRequest{Command: "echo awake"})
		return err
	})
	if err != nil || res.Stdout != "awake\n" {
		t.Fatalf("exec on a sleeping instance: %v %+v", err, res)
	}
	// Start wakes it.
	waitStatus(t, env, in.ID, "sleeping", 30*time.Second)
	var ack sdk.Ack
	err = settled(t, func() (err error) { ack, err = env.Client.StartInstance(ctx, in.ID); return err })
	if err != nil || ack.Status != "running" {
		t.Fatalf("start of a sleeping instance: %v %+v", err, ack)
	}
	// Restart of a sleeping instance is 400; stop stops it for good.
	waitStatus(t, env, in.ID, "sleeping", 30*time.Second)
	err = settled(t, func() error { _, err := env.Client.RestartInstance(ctx, in.ID); return err })
	wantCode(t, err, 400, "invalid_request")
	if ack, err := env.Client.StopInstance(ctx, in.ID); err != nil || ack.Status != "stopped" {
		t.Fatalf("stop of a sleeping instance: %v %+v", err, ack)
	}
	if got, _ := env.Client.Instance(ctx, in.ID); got.Status != "stopped" || got.SleptAt != nil {
		t.Fatalf("stopped: %s %v", got.Status, got.SleptAt)
	}
	before := boots(t, env, in.ID)
	if code, b, _ := fetch(t, hc, "GET", public+"/", nil, nil); code != 503 || strings.TrimSpace(b) != `{"error":"unavailable"}` {
		t.Fatalf("public URL of a stopped instance: %d %q", code, b)
	}
	if code, b, _ := fetch(t, hc, "GET", in.URL+"/", key, nil); code != 503 || !strings.Contains(b, `"error":"unavailable"`) {
		t.Fatalf("instance URL of a stopped instance: %d %q", code, b)
	}
	if code, b, _ := fetch(t, hc, "GET", in.URL+"/health", nil, nil); code != 200 || !strings.Contains(b, `"status":"stopped"`) {
		t.Fatalf("health of a stopped instance: %d %q", code, b)
	}
	if got, _ := env.Client.Instance(ctx, in.ID); got.Status != "stopped" || boots(t, env, in.ID) != before {
		t.Fatal("a URL woke a stopped instance")
	}
	if _, err := env.Client.StartInstance(ctx, in.ID); err != nil {
		t.Fatal(err)
	}

	// While the checkpoint is being written: try_again for stop, start and
	// exec; a request is held and served after the wake.
	g.arm()
	select {
	case <-g.reached:
	case <-time.After(30 * time.Second):
		t.Fatal("the instance did not start sleeping")
	}
	got, _ := env.Client.Instance(ctx, in.ID)
	if got.Status != "sleeping" || got.SleptAt == nil {
		t.Fatalf("during the checkpoint: %s %v", got.Status, got.SleptAt)
	}
	_, err = env.Client.StopInstance(ctx, in.ID)
	wantCode(t, err, 409, "try_again")
	_, err = env.Client.StartInstance(ctx, in.ID)
	wantCode(t, err, 409, "try_again")
	_, err = env.Client.Exec(ctx, in.ID, sdk.ExecRequest{Command: "true"})
	wantCode(t, err, 409, "try_again")
	held := make(chan string, 1)
	go func() {
		code, b, _ := fetch(t, hc, "GET", in.URL+"/", key, nil)
		held <- strings.TrimSpace(b) + " " + http.StatusText(code)
	}()
	select {
	case b := <-held:
		t.Fatalf("a request passed during the checkpoint: %s", b)
	case <-time.After(500 * time.Millisecond):
	}
	g.open()
	if b := <-held; b != "hello from port 8000 OK" {
		t.Fatalf("held request: %s", b)
	}

	// Exec is activity: one every 500 ms for 5 s keeps it awake.
	before = boots(t, env, in.ID)
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if _, err := env.Client.Exec(ctx, in.ID, sdk.ExecRequest{Command: "true"}); err != nil {
			t.Fatalf("exec: %v", err)
		}
	}
	if got, _ := env.Client.Instance(ctx, in.ID); got.Status != "running" || boots(t, env, in.ID) != before {
		t.Fatalf("slept between execs: %s", got.Status)
	}

	// PATCH auto_sleep false: it stays awake past the idle timeout.
	if _, err := env.Client.UpdateInstance(ctx, in.ID, map[string]any{"auto_sleep": false}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Second)
	if got, _ := env.Client.Instance(ctx, in.ID); got.Status != "running" {
		t.Fatalf("auto_sleep off, but %s", got.Status)
	}
}

// TestWakeLimits: past the wake budget the answer is 503 wake_timeout; a
// sandbox with no port sleeps and wakes only by exec or start.
func TestWakeLimits(t *testing.T) {
	env := svctest.New(t, svctest.Options{MinIdleTimeout: 1, WakeTimeout: 2 * time.Second})
	ctx := context.Background()
	env.Template("web", svctest.WebApp(8000), 8000)
	env.Template("sandbox", svctest.Sleeper(), 0)
	web, err := env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "web", AutoSleep: ptr(true), IdleTimeoutSeconds: ptr(1)})
	if err != nil {
		t.Fatal(err)
	}
	box, err := env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "sandbox", AutoSleep: ptr(true), IdleTimeoutSeconds: ptr(1)})
	if err != nil {
		t.Fatal(err)
	}
	hc := plainClient()
	key := map[string]string{"X-Svc-Key": env.Client.Key}
	waitStatus(t, env, web.ID, "sleeping", 30*time.Second)
	// Port 9999 never opens: the wake runs, the request's budget ends.
	closed := strings.Replace(web.URL, web.ID, web.ID+"-9999", 1)
	if code, b, _ := fetch(t, hc, "GET", closed+"/", key, nil); code != 503 || strings.TrimSpace(b) != `{"error":"wake_timeout"}` {
		t.Fatalf("past the budget: %d %q", code, b)
	}
	// The wake itself carried on (and, idle again, the instance may be
	// back asleep already): the application booted a second time.
	for deadline := time.Now().Add(30 * time.Second); boots(t, env, web.ID) != 2; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			rc, _ := env.Client.Logs(ctx, web.ID, 0, false)
			b, _ := io.ReadAll(rc)
			t.Fatalf("the wake did not finish: %d boots\n%s", boots(t, env, web.ID), b)
		}
	}

	waitStatus(t, env, box.ID, "sleeping", 30*time.Second)
	code, b, _ := fetch(t, hc, "GET", box.URL+"/", key, nil)
	if code != 503 || !strings.Contains(b, `"error":"unavailable"`) {
		t.Fatalf("bare URL of a sleeping sandbox: %d %q", code, b)
	}
	if got, _ := env.Client.Instance(ctx, box.ID); got.Status != "sleeping" {
		t.Fatalf("the bare URL woke the sandbox: %s", got.Status)
	}
	var res sdk.ExecResult
	err = settled(t, func() (err error) {
		res, err = env.Client.Exec(ctx, box.ID, sdk.ExecRequest{Command: "echo up"})
		return err
	})
	if err != nil || res.Stdout != "up\n" {
		t.Fatalf("exec wakes the sandbox: %v %+v", err, res)
	}
}
