package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/svc-dev/svc/internal/gateway"
	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/harness/builtin"
	"github.com/svc-dev/svc/internal/harness/generala"
	"github.com/svc-dev/svc/internal/harness/harnesstest"
	"github.com/svc-dev/svc/internal/modeltest"
	"github.com/svc-dev/svc/internal/sse"
)

// benchHarness names the harness the SSE figures run through.
const benchHarness = "general-a (the built-in agent)"

// newBenchHarness builds it.
func newBenchHarness(modelURL, home string) harness.Harness {
	h, err := generala.New(builtin.Config{Home: home, ModelBaseURL: modelURL, Model: "test-model"})
	if err != nil {
		panic(err)
	}
	return h
}

func benchGateway(ctx context.Context, r *report) error {
	s := r.section("gateway")
	work, err := os.MkdirTemp("", "svc-bench-gateway-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if err := benchSSE(ctx, s, work); err != nil {
		return fmt.Errorf("sse: %w", err)
	}
	if err := benchFiles(ctx, s, work); err != nil {
		return fmt.Errorf("files: %w", err)
	}
	if err := benchArchive(ctx, s, work); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	if err := benchIdleRSS(ctx, s, work); err != nil {
		return fmt.Errorf("rss: %w", err)
	}
	return nil
}

// benchGW is an in-process gateway on loopback serving h.
func benchGW(h harness.Harness, home string) (*httptest.Server, func(), error) {
	cfg := gateway.DefaultConfig()
	cfg.Home = home
	gw, err := gateway.New(cfg, gateway.Registry{Default: h.ID(), Harnesses: []harness.Harness{h}}, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, nil, err
	}
	srv := httptest.NewServer(gw.Handler())
	return srv, func() { srv.Close(); gw.Close() }, nil
}

// benchSSE measures streamed tokens per second at 1, 10 and 100
// concurrent sessions three ways: reading the scripted model directly,
// through the harness alone (no gateway), and through the gateway's SSE.
// The difference between the last two is the gateway's cost per token.
func benchSSE(ctx context.Context, s *section, work string) error {
	const chunk = 4         // bytes per model delta: about one token
	const answer = 16 << 10 // bytes per turn: 4096 tokens
	text := strings.Repeat("lorem ipsum dolor sit amet, ", answer/28+1)[:answer]
	model, err := modeltest.Start(modeltest.Config{Fallback: func(modeltest.Request) modeltest.Reply {
		return modeltest.Reply{Content: text, ChunkSize: chunk}
	}})
	if err != nil {
		return err
	}
	defer model.Close()
	h := newBenchHarness(model.URL, work)
	srv, stop, err := benchGW(h, work)
	if err != nil {
		return err
	}
	defer stop()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 200}}

	direct := func(i int) (int, error) {
		body := `{"model":"test-model","stream":true,"messages":[{"role":"user","content":"go"}]}`
		resp, err := client.Post(model.URL+"/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		return countEvents(resp.Body, "")
	}
	harnessOnly := func(i int) (int, error) {
		n := 0
		_, err := h.Run(ctx, harness.Turn{SessionID: fmt.Sprintf("h%d-%d", i, rand.Int()), NewSession: true, Input: "go"},
			func(ev harness.Event) error {
				if ev.Name == harness.OutputTextDelta {
					n++
				}
				return nil
			})
		return n, err
	}
	viaGateway := func(i int) (int, error) {
		resp, err := client.Post(srv.URL+"/v1/responses", "application/json", strings.NewReader(`{"input":"go","stream":true}`))
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		return countEvents(resp.Body, harness.OutputTextDelta)
	}

	s.line("### Streamed tokens").line("")
	s.line("Each turn streams %d KB from the scripted model (no delay) in %d-byte deltas, one SSE event per delta. Harness: %s. "+
		"Best of three interleaved runs. *Direct* reads the model's stream itself; *harness* runs the harness with no gateway; *gateway* is the full path "+
		"(model → harness → gateway → SSE client, all on loopback, sharing the machine's %d cores).", answer>>10, chunk, benchHarness, runtime.NumCPU())
	var rows [][]string
	for _, c := range []int{1, 10, 100} {
		// Best of three interleaved runs of each path: these machines are
		// noisy, and interleaving spreads the noise evenly.
		turns := max(c, 16) * 4
		var d, hr, g throughput
		for range 3 {
			for _, m := range []struct {
				best *throughput
				turn func(int) (int, error)
			}{{&d, direct}, {&hr, harnessOnly}, {&g, viaGateway}} {
				got, err := rate(ctx, c, turns, m.turn)
				if err != nil {
					return err
				}
				m.best.keepBest(got)
			}
		}
		rows = append(rows, []string{fmt.Sprint(c), fmt.Sprintf("%.0f", d.perSec), fmt.Sprintf("%.0f", hr.perSec), fmt.Sprintf("%.0f", g.perSec),
			fmt.Sprintf("%.2f", g.perSec/hr.perSec), fmt.Sprintf("%.1f µs", (g.cpuPerItem-hr.cpuPerItem)*1e6)})
	}
	s.table([]string{"sessions", "direct tokens/s", "harness tokens/s", "gateway events/s", "gateway / harness", "gateway CPU per token"}, rows)
	s.line("*Gateway CPU per token* is the process CPU time per token through the gateway minus that of the harness alone: " +
		"what the gateway adds (buffering, SSE encoding, HTTP, the client's parsing) per streamed token. A negative figure is below " +
		"the run-to-run noise: at one session the path is latency-bound and goroutine wake-ups dominate both measurements.")
	return nil
}

// countEvents reads an SSE body and counts events named name (every data
// frame but [DONE] when name is empty).
func countEvents(r io.Reader, name string) (int, error) {
	rd := sse.NewReader(r)
	n := 0
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if name == "" && string(ev.Data) != "[DONE]" || name != "" && ev.Name == name {
			n++
		}
	}
}

// throughput is what rate measured: items per second of wall time and
// process CPU seconds per item.
type throughput struct {
	perSec     float64
	cpuPerItem float64
}

// keepBest keeps the highest rate and the lowest CPU per item seen.
func (t *throughput) keepBest(o throughput) {
	if t.perSec == 0 || o.perSec > t.perSec {
		t.perSec = o.perSec
	}
	if t.cpuPerItem == 0 || o.cpuPerItem < t.cpuPerItem {
		t.cpuPerItem = o.cpuPerItem
	}
}

// rate runs turns across c workers, counting the items each returns.
func rate(ctx context.Context, c, turns int, turn func(int) (int, error)) (throughput, error) {
	var next, total atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	cpu0 := cpuTime()
	start := time.Now()
	for w := range c {
		wg.Go(func() {
			for ctx.Err() == nil && next.Add(1) <= int64(turns) {
				n, err := turn(w)
				if err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				total.Add(int64(n))
			}
		})
	}
	wg.Wait()
	wall, cpu := time.Since(start), cpuTime()-cpu0
	if firstErr != nil {
		return throughput{}, firstErr
	}
	n := float64(total.Load())
	if n == 0 {
		return throughput{}, errors.New("no events")
	}
	return throughput{perSec: n / wall.Seconds(), cpuPerItem: cpu.Seconds() / n}, nil
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchFiles measures upload and download of one large file against cp.
func benchFiles(ctx context.Context, s *section, work string) error {
	const size = 1 << 30
	src := filepath.Join(work, "src.bin")
	if err := writeRandom(src, size); err != nil {
		return err
	}
	h := harnesstest.NewReference(harness.GeneralA, "http://127.0.0.1:1/v1", "m", work)
	srv, stop, err := benchGW(h, work)
	if err != nil {
		return err
	}
	defer stop()
	dst := filepath.Join(work, "dst.bin")
	best := func(f func() error) (time.Duration, error) {
		var b time.Duration
		for range 3 {
			os.Remove(dst)
			start := time.Now()
			if err := f(); err != nil {
				return 0, err
			}
			if d := time.Since(start); b == 0 || d < b {
				b = d
			}
		}
		return b, nil
	}
	cp, err := best(func() error { return exec.CommandContext(ctx, "cp", src, dst).Run() })
	if err != nil {
		return err
	}
	up, err := best(func() error {
		f, err := os.Open(src)
		if err != nil {
			return err
		}
		defer f.Close()
		req, _ := http.NewRequestWithContext(ctx, "PUT", srv.URL+"/v1/files/content?path="+url.QueryEscape(dst), f)
		req.ContentLength = size
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("upload: %s", resp.Status)
		}
		return nil
	})
	if err != nil {
		return err
	}
	down, err := best(func() error {
		resp, err := http.Get(srv.URL + "/v1/files/content?path=" + url.QueryEscape(src))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		f, err := os.Create(dst)
		if err != nil {
			return err
		}
		defer f.Close()
		// A large buffer, as any serious download client uses.
		n, err := io.CopyBuffer(struct{ io.Writer }{f}, resp.Body, make([]byte, 256<<10))
		if err == nil && n != size {
			err = fmt.Errorf("downloaded %d bytes", n)
		}
		return err
	})
	if err != nil {
		return err
	}
	mbps := func(d time.Duration) string { return fmt.Sprintf("%.0f MB/s", float64(size)/d.Seconds()/1e6) }
	s.line("").line("### Files").line("")
	s.line("One 1 GiB file of random bytes on the same disk, best of three, page cache warm; the HTTP client is in the same process, on loopback.")
	s.table([]string{"operation", "throughput", "vs cp"}, [][]string{
		{"`cp` (baseline)", mbps(cp), "1.00"},
		{"upload (PUT /v1/files/content)", mbps(up), fmt.Sprintf("%.2f", cp.Seconds()/up.Seconds())},
		{"download (GET /v1/files/content)", mbps(down), fmt.Sprintf("%.2f", cp.Seconds()/down.Seconds())},
	})
	return nil
}

// writeRandom writes size incompressible bytes.
func writeRandom(path string, size int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	rng := rand.NewChaCha8([32]byte{1})
	buf := make([]byte, 1<<20)
	for written := 0; written < size; written += len(buf) {
		rng.Read(buf)
		if _, err := f.Write(buf); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// benchArchive compares GET /v1/files/archive with tar czf on Go's own
// source tree.
func benchArchive(ctx context.Context, s *section, work string) error {
	tree := filepath.Join(runtime.GOROOT(), "src")
	var bytes, files int64
	filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				bytes += info.Size()
				files++
			}
		}
		return nil
	})
	h := harnesstest.NewReference(harness.GeneralA, "http://127.0.0.1:1/v1", "m", work)
	srv, stop, err := benchGW(h, work)
	if err != nil {
		return err
	}
	defer stop()
	measure := func(f func() (int64, error)) (time.Duration, int64, error) {
		var best time.Duration
		var out int64
		for range 3 {
			start := time.Now()
			n, err := f()
			if err != nil {
				return 0, 0, err
			}
			if d := time.Since(start); best == 0 || d < best {
				best, out = d, n
			}
		}
		return best, out, nil
	}
	tarTime, tarSize, err := measure(func() (int64, error) {
		cmd := exec.CommandContext(ctx, "tar", "czf", "-", "-C", filepath.Dir(tree), filepath.Base(tree))
		out, err := cmd.StdoutPipe()
		if err != nil {
			return 0, err
		}
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		n, _ := io.Copy(io.Discard, out)
		return n, cmd.Wait()
	})
	if err != nil {
		return err
	}
	gwTime, gwSize, err := measure(func() (int64, error) {
		resp, err := http.Get(srv.URL + "/v1/files/archive?path=" + url.QueryEscape(tree))
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		return io.Copy(io.Discard, resp.Body)
	})
	if err != nil {
		return err
	}
	mbps := func(d time.Duration) string { return fmt.Sprintf("%.0f MB/s", float64(bytes)/d.Seconds()/1e6) }
	s.line("").line("### Archive").line("")
	s.line("Go's `src` tree (%d files, %d MB), best of three, page cache warm. The gateway compresses at gzip level 1 (it streams while the client waits); `tar czf` uses gzip's default level 6.", files, bytes/1e6)
	s.table([]string{"tool", "input throughput", "output size", "vs tar czf"}, [][]string{
		{"`tar czf` (baseline)", mbps(tarTime), fmt.Sprintf("%d MB", tarSize/1e6), "1.00"},
		{"GET /v1/files/archive", mbps(gwTime), fmt.Sprintf("%d MB", gwSize/1e6), fmt.Sprintf("%.2f", tarTime.Seconds()/gwTime.Seconds())},
	})
	return nil
}

// benchIdleRSS builds the static binary and reads the resident memory of
// an idle gateway after it has served one call of each kind.
func benchIdleRSS(ctx context.Context, s *section, work string) error {
	bin := filepath.Join(work, "svc-gateway")
	build := exec.CommandContext(ctx, "go", "build", "-ldflags", "-s -w", "-o", bin, "./cmd/svc-gateway")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build: %v: %s", err, out)
	}
	info, err := os.Stat(bin)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	home := filepath.Join(work, "home")
	cmd := exec.CommandContext(ctx, bin, "--listen", addr)
	cmd.Env = []string{"HOME=" + home}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	base := "http://" + addr
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(base + "/v1/version")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			return errors.New("gateway did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, p := range []string{"/v1/health", "/v1/files", "/v1/files/archive", "/v1/sessions"} {
		if resp, err := http.Get(base + p); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	if resp, err := http.Post(base+"/v1/responses", "application/json", strings.NewReader(`{"input":"hi"}`)); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	time.Sleep(2 * time.Second)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		return err
	}
	rss := ""
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			rss = strings.TrimSpace(strings.TrimPrefix(l, "VmRSS:"))
		}
	}
	s.line("").line("### Idle memory").line("")
	s.line("Static binary (`CGO_ENABLED=0`, `-s -w`): %.1f MB. Resident memory of an idle gateway, 2 s after serving one call of each kind "+
		"(no harness provisioned, so the figure is the gateway's own): **%s** (goal: under 20 MB).", float64(info.Size())/1e6, rss)
	return nil
}
