package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/svc-dev/svc/internal/runtime/docker"
	"github.com/svc-dev/svc/internal/server"
	"github.com/svc-dev/svc/internal/testimage"
	"github.com/svc-dev/svc/sdk"
)

// Edge benchmark parameters.
const (
	edgeWorkers  = 32              // concurrent clients of the throughput runs
	edgeRun      = 4 * time.Second // length of one throughput run
	edgeRounds   = 3               // throughput runs per side, alternating
	edgeSeq      = 2000            // sequential requests of the latency runs
	edgeWakes    = 7               // wakes timed
	edgeStreams  = 1000            // idle SSE streams held
	edgeIdleSecs = 1               // idle timeout of the wake runs
)

// benchEdge measures the edge against going straight to the container in
// the same run: small responses (throughput and latency), time to first
// byte of a request that wakes a sleeping instance, and memory per idle
// SSE stream held open through it.
func benchEdge(ctx context.Context, r *report) error {
	s := r.section("edge")
	env, err := startBenchServerWith(ctx, func(c *server.Config) {
		c.MinIdleTimeout = edgeIdleSecs
		c.IdleCheckEvery = 100 * time.Millisecond
		c.StopGrace = 2 * time.Second
	})
	if err != nil {
		return err
	}
	defer env.close()
	cl := env.client
	img, err := testimage.PushImage(env.registry, "bench/webapp", testimage.Options{
		Programs: []testimage.Program{{Package: "github.com/svc-dev/svc/internal/testimage/webapp", Path: "/app"}},
		Cmd:      []string{"/app", "-ports", "8000"},
	})
	if err != nil {
		return err
	}
	defer removeImage(img.Digest)
	port := 8000
	if _, err := cl.CreateTemplate(ctx, sdk.CreateTemplate{Name: "web", ImageRef: img.Ref, DefaultPort: &port}); err != nil {
		return err
	}
	in, err := cl.CreateInstance(ctx, sdk.CreateInstance{Template: "web", Resources: &sdk.Resources{Disk: 1}})
	if err != nil {
		return err
	}
	defer cl.DeleteInstance(context.WithoutCancel(ctx), in.ID)
	st, err := env.srv.Runtime.Inspect(ctx, in.ID)
	if err != nil {
		return err
	}
	direct := "http://" + net.JoinHostPort(st.Addr.String(), "8000") + "/"
	viaEdge := in.URL + "/"

	cpu := func() (time.Duration, time.Duration) {
		m, _ := env.srv.Runtime.Metrics(ctx, in.ID)
		return processCPU(), time.Duration(m.CPUSeconds * float64(time.Second))
	}
	if err := edgeThroughput(ctx, s, cpu, direct, viaEdge, cl.Key); err != nil {
		return err
	}
	if err := edgeStreamsMemory(ctx, s, st.Addr.String(), in, cl.Key); err != nil {
		return err
	}
	return edgeWake(ctx, s, env, in, cl)
}

// loadRun is one measured run: requests/s, every latency, and the CPU
// time per request of this process (svcd and the load generator) and of
// the instance's container.
type loadRun struct {
	rps      float64
	lat      []time.Duration
	procCPU  time.Duration
	instCPU  time.Duration
	requests int
}

// cpuMeter reads the CPU time of this process and of the instance.
type cpuMeter func() (proc, inst time.Duration)

// measured runs load and attributes the CPU used meanwhile.
func measured(ctx context.Context, cpu cpuMeter, url, key string, workers int, d time.Duration) (loadRun, error) {
	p0, i0 := cpu()
	run, err := load(ctx, url, key, workers, d, 0)
	p1, i1 := cpu()
	if n := len(run.lat); n > 0 {
		run.requests = n
		run.procCPU = (p1 - p0) / time.Duration(n)
		run.instCPU = (i1 - i0) / time.Duration(n)
	}
	return run, err
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func us(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d.Nanoseconds())/1000) }

// load runs workers clients against url for d, each on its own
// keep-alive connection, and times every request.
func load(ctx context.Context, url, key string, workers int, d time.Duration, n int) (loadRun, error) {
	tr := sdk.Transport()
	tr.MaxIdleConnsPerHost = workers
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	var mu sync.Mutex
	var all []time.Duration
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(d)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 4096)
			for i := 0; (n == 0 && time.Now().Before(end)) || (n > 0 && i < n); i++ {
				req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
				if key != "" {
					req.Header.Set("X-Svc-Key", key)
				}
				t := time.Now()
				resp, err := hc.Do(req)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						err = fmt.Errorf("%s: %s", url, resp.Status)
					}
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				lat = append(lat, time.Since(t))
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return loadRun{rps: float64(len(all)) / time.Since(start).Seconds(), lat: all}, firstErr
}

func edgeThroughput(ctx context.Context, s *section, cpu cpuMeter, direct, viaEdge, key string) error {
	// Warm both paths (connections, caches).
	for _, u := range []string{direct, viaEdge} {
		if _, err := load(ctx, u, key, edgeWorkers, 0, 50); err != nil {
			return err
		}
	}
	relayURL, stopRelay, err := tcpRelay(strings.TrimSuffix(strings.TrimPrefix(direct, "http://"), "/"))
	if err != nil {
		return err
	}
	defer stopRelay()
	var dRuns, rRuns, eRuns []loadRun
	for i := 0; i < edgeRounds; i++ {
		d, err := measured(ctx, cpu, direct, "", edgeWorkers, edgeRun)
		if err != nil {
			return err
		}
		rr, err := measured(ctx, cpu, relayURL, "", edgeWorkers, edgeRun)
		if err != nil {
			return err
		}
		e, err := measured(ctx, cpu, viaEdge, key, edgeWorkers, edgeRun)
		if err != nil {
			return err
		}
		dRuns, rRuns, eRuns = append(dRuns, d), append(rRuns, rr), append(eRuns, e)
	}
	best := func(runs []loadRun) loadRun {
		b := runs[0]
		for _, r := range runs[1:] {
			if r.rps > b.rps {
				b = r
			}
		}
		return b
	}
	d, rl, e := best(dRuns), best(rRuns), best(eRuns)
	// Latency added by the edge: one client, sequential requests.
	dSeq, err := load(ctx, direct, "", 1, 0, edgeSeq)
	if err != nil {
		return err
	}
	eSeq, err := load(ctx, viaEdge, key, 1, 0, edgeSeq)
	if err != nil {
		return err
	}
	s.line("The test application's `/` (21-byte answer) on a 2/4 instance, straight to the container's address and through the edge (`{id}.localhost`, key checked, X-Svc-Key stripped, gateway token added); the load generator runs in the same process as svcd, on the same %d cores. Throughput: %d keep-alive clients for %s, best of %d alternating runs per side.", runtime.NumCPU(), edgeWorkers, edgeRun, edgeRounds)
	ratio := e.rps / d.rps
	s.table([]string{"path", "requests/s", "p50", "p99", "CPU/request: svcd+clients", "CPU/request: container", "runs (req/s)"}, [][]string{
		{"direct to the container (baseline)", fmt.Sprintf("%.0f", d.rps), ms(median(d.lat)), ms(percentile(d.lat, 99)), us(d.procCPU), us(d.instCPU), rpsList(dRuns)},
		{"a bare TCP relay in this process (an extra hop, no HTTP)", fmt.Sprintf("%.0f", rl.rps), ms(median(rl.lat)), ms(percentile(rl.lat, 99)), us(rl.procCPU), us(rl.instCPU), rpsList(rRuns)},
		{"through the edge", fmt.Sprintf("%.0f", e.rps), ms(median(e.lat)), ms(percentile(e.lat, 99)), us(e.procCPU), us(e.instCPU), rpsList(eRuns)},
		{"edge / direct", fmt.Sprintf("%.2f", ratio), "", "", "", "", ""},
		{"bare relay / direct", fmt.Sprintf("%.2f", rl.rps/d.rps), "", "", "", "", ""},
	})
	edgeCPU := e.procCPU - d.procCPU
	direct1 := d.procCPU + d.instCPU
	s.line("CPU (user+system, this process from getrusage, the container from its cgroup) per request: the edge costs %s on top of the load generator's own (%s per request through the edge, %s direct), against %s for the client and the application together on the direct path. On this %d-core host the load generator, the edge, the application and the kernel share the cores, so when every core is busy the edge path can reach at most about %.0f%% of the direct throughput (the direct path's CPU per request over the edge path's); a host whose edge has its own cores does not pay that.",
		us(edgeCPU), us(e.procCPU), us(d.procCPU), us(direct1), runtime.NumCPU(), 100*float64(direct1)/float64(e.procCPU+e.instCPU))
	added := median(eSeq.lat) - median(dSeq.lat)
	s.line("One client, %d sequential requests per side (latency the edge adds):", edgeSeq)
	s.table([]string{"path", "p50", "p99"}, [][]string{
		{"direct to the container", ms(median(dSeq.lat)), ms(percentile(dSeq.lat, 99))},
		{"through the edge", ms(median(eSeq.lat)), ms(percentile(eSeq.lat, 99))},
		{"added by the edge (p50 difference)", ms(added), ""},
	})
	s.line("Goals: at least 85%% of direct throughput (measured %.0f%%: %s; a bare TCP relay reaches %.0f%% here); under 1 ms added at p50 (measured %s: %s).",
		ratio*100, verdict(ratio >= 0.85), 100*rl.rps/d.rps, ms(added), verdict(added < time.Millisecond))
	return nil
}

func rpsList(runs []loadRun) string {
	var parts []string
	for _, r := range runs {
		parts = append(parts, fmt.Sprintf("%.0f", r.rps))
	}
	return strings.Join(parts, ", ")
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

// openIdle opens n SSE streams that stay silent (an event an hour) with
// bare TCP clients, so the client side costs little; it returns once every
// stream has its headers.
func openIdle(ctx context.Context, dial, host, key string, n int) ([]net.Conn, error) {
	conns := make([]net.Conn, 0, n)
	req := "GET /sse?gap=1h HTTP/1.1\r\nHost: " + host + "\r\n"
	if key != "" {
		req += "X-Svc-Key: " + key + "\r\n"
	}
	req += "\r\n"
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", dial)
		if err != nil {
			closeAll(conns)
			return nil, err
		}
		conns = append(conns, c)
		if _, err := io.WriteString(c, req); err != nil {
			closeAll(conns)
			return nil, err
		}
		status, err := bufio.NewReaderSize(c, 512).ReadString('\n')
		if err != nil || !strings.Contains(status, " 200 ") {
			closeAll(conns)
			return nil, fmt.Errorf("stream %d: %q %v", i, status, err)
		}
	}
	return conns, nil
}

func closeAll(conns []net.Conn) {
	for _, c := range conns {
		c.Close()
	}
}

// memory reads this process's RSS (from /proc) and Go heap in use.
func memory() (rss, heap uint64) {
	debug.FreeOSMemory() // a GC that also returns freed pages, so RSS settles
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			rss = kb << 10
		}
	}
	return rss, ms.HeapInuse
}

func edgeStreamsMemory(ctx context.Context, s *section, addr string, in sdk.Instance, key string) error {
	u, _ := url.Parse(in.URL)
	measure := func(dial, host, key string) (rss, heap int64, err error) {
		r0, h0 := memory()
		conns, err := openIdle(ctx, dial, host, key, edgeStreams)
		if err != nil {
			return 0, 0, err
		}
		time.Sleep(time.Second) // let every goroutine settle
		r1, h1 := memory()
		closeAll(conns)
		time.Sleep(time.Second)
		return int64(r1) - int64(r0), int64(h1) - int64(h0), nil
	}
	dRSS, dHeap, err := measure(net.JoinHostPort(addr, "8000"), addr, "")
	if err != nil {
		return err
	}
	eRSS, eHeap, err := measure("127.0.0.1:"+u.Port(), u.Host, key)
	if err != nil {
		return err
	}
	per := func(b int64) string { return fmt.Sprintf("%.1f KB", float64(b)/edgeStreams/1024) }
	s.line("%d idle SSE streams (an event an hour) opened by bare TCP clients in this process and held; memory growth of the process (svcd and the clients) while they are open. The direct run costs only the clients; the difference is what the edge holds per stream (its client connection, the container connection, the proxy goroutines and buffers).", edgeStreams)
	s.table([]string{"streams held", "RSS growth", "Go heap growth", "RSS per stream", "heap per stream"}, [][]string{
		{"direct to the container (clients only)", mib(dRSS), mib(dHeap), per(dRSS), per(dHeap)},
		{"through the edge", mib(eRSS), mib(eHeap), per(eRSS), per(eHeap)},
		{"edge's share", mib(eRSS - dRSS), mib(eHeap - dHeap), per(eRSS - dRSS), per(eHeap - dHeap)},
	})
	return nil
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// edgeWake times the first byte of a request that wakes a sleeping
// instance, next to the engine starting the same stopped container until
// the port accepts (what any wake has to wait for on this host).
func edgeWake(ctx context.Context, s *section, env *benchServer, in sdk.Instance, cl *sdk.Client) error {
	if _, err := cl.UpdateInstance(ctx, in.ID, map[string]any{"auto_sleep": true, "idle_timeout_seconds": edgeIdleSecs}); err != nil {
		return err
	}
	hc := &http.Client{Transport: sdk.Transport()}
	var ttfb, engine []time.Duration
	for i := 0; i < edgeWakes; i++ {
		if err := waitAsleep(ctx, env, cl, in.ID); err != nil {
			return err
		}
		req, _ := http.NewRequestWithContext(ctx, "GET", in.URL+"/", nil)
		req.Header.Set("X-Svc-Key", cl.Key)
		var first time.Time
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotFirstResponseByte: func() { first = time.Now() },
		}))
		start := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("wake request: %s", resp.Status)
		}
		ttfb = append(ttfb, first.Sub(start))
	}
	// Baseline: the engine alone, on the same container, stopped.
	if _, err := cl.UpdateInstance(ctx, in.ID, map[string]any{"auto_sleep": false}); err != nil {
		return err
	}
	drv := env.srv.Runtime.(*docker.Driver)
	for i := 0; i < edgeWakes; i++ {
		if err := drv.Stop(ctx, in.ID, 2*time.Second); err != nil {
			return err
		}
		start := time.Now()
		if err := drv.Start(ctx, in.ID); err != nil {
			return err
		}
		for {
			st, err := drv.Inspect(ctx, in.ID)
			if err != nil {
				return err
			}
			if c, err := net.DialTimeout("tcp", net.JoinHostPort(st.Addr.String(), "8000"), time.Second); err == nil && st.Addr.IsValid() {
				c.Close()
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		engine = append(engine, time.Since(start))
	}
	s.line("Wake on request: the instance (auto_sleep, idle timeout %d s) is asleep — on this host its container is stopped, as dockerd runs without experimental checkpoints — and one GET is sent to its URL; time to the first byte of the answer, %d wakes. Baseline: the engine starting the same stopped container until its port accepts (driver Start, Inspect, dial), %d times.", edgeIdleSecs, edgeWakes, edgeWakes)
	s.table([]string{"", "p50", "max", "runs"}, [][]string{
		{"engine start until the port accepts (baseline)", ms(median(engine)), ms(percentile(engine, 100)), durList(engine)},
		{"time to first byte of a waking request", ms(median(ttfb)), ms(percentile(ttfb, 100)), durList(ttfb)},
	})
	s.line("Goal: under 2 s for a small image (measured p50 %s, max %s: %s).", ms(median(ttfb)), ms(percentile(ttfb, 100)), verdict(percentile(ttfb, 100) < 2*time.Second))
	return nil
}

func durList(d []time.Duration) string {
	var parts []string
	for _, x := range d {
		parts = append(parts, x.Round(time.Millisecond).String())
	}
	return strings.Join(parts, ", ")
}

// waitAsleep waits until the instance's sleep has finished: status
// sleeping and its container stopped.
func waitAsleep(ctx context.Context, env *benchServer, cl *sdk.Client, id string) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		in, err := cl.Instance(ctx, id)
		if err != nil {
			return err
		}
		if in.Status == "sleeping" {
			if st, err := env.srv.Runtime.Inspect(ctx, id); err == nil && !st.Addr.IsValid() {
				time.Sleep(200 * time.Millisecond) // the op column clears just after
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("instance %s did not fall asleep", id)
}

// removeImage removes every local image with digest (the copy the engine
// pulled from svcd's registry), so bench runs leave nothing behind.
func removeImage(digest string) {
	out, err := exec.Command("docker", "images", "--digests", "--format", "{{.ID}} {{.Digest}}").Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[1] == digest {
			exec.Command("docker", "rmi", "-f", f[0]).Run()
		}
	}
}

// tcpRelay forwards every connection to addr with two io.Copy: the
// cheapest possible extra hop, to show what any proxy costs on this host.
func tcpRelay(addr string) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				defer b.Close()
				go io.Copy(b, c)
				io.Copy(c, b)
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/", func() { ln.Close() }, nil
}
