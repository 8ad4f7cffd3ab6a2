package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/server"
	"github.com/svc-dev/svc/internal/testimage"
	"github.com/svc-dev/svc/sdk"
)

// apiRounds is how many creates the latency figures are taken over.
const apiRounds = 25

// benchAPI times the hosting API on the real dockerd: create-to-running
// next to `docker run -d` of the same image, stop/start and restart, and
// listing 200 instances next to the engine listing their containers.
func benchAPI(ctx context.Context, r *report) error {
	s := r.section("api")
	env, err := startBenchServer(ctx)
	if err != nil {
		return err
	}
	defer env.close()
	cl := env.client

	img, err := testimage.PushImage(env.registry, "bench/sleeper", testimage.Options{
		Entrypoint: []string{"/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1 & wait $!; done"},
	})
	if err != nil {
		return err
	}
	if _, err := cl.CreateTemplate(ctx, sdk.CreateTemplate{Name: "sleeper", ImageRef: img.Ref}); err != nil {
		return err
	}
	create := func() (sdk.Instance, time.Duration, error) {
		start := time.Now()
		in, err := cl.CreateInstance(ctx, sdk.CreateInstance{Template: "sleeper", Resources: &sdk.Resources{Disk: 1}})
		return in, time.Since(start), err
	}
	// Warm up both paths: the engine pulls the image once.
	if in, _, err := create(); err != nil {
		return err
	} else if err := cl.DeleteInstance(ctx, in.ID); err != nil {
		return err
	}
	if err := exec.CommandContext(ctx, "docker", "pull", img.Ref).Run(); err != nil {
		return fmt.Errorf("docker pull %s: %w", img.Ref, err)
	}

	var apiLat, runLat []time.Duration
	for i := 0; i < apiRounds; i++ {
		in, d, err := create()
		if err != nil {
			return err
		}
		apiLat = append(apiLat, d)
		if err := cl.DeleteInstance(ctx, in.ID); err != nil {
			return err
		}
		start := time.Now()
		out, err := exec.CommandContext(ctx, "docker", "run", "-d", "--memory", "4g", "--cpus", "2", img.Ref).Output()
		if err != nil {
			return fmt.Errorf("docker run: %w", err)
		}
		runLat = append(runLat, time.Since(start))
		exec.CommandContext(ctx, "docker", "rm", "-f", strings.TrimSpace(string(out))).Run()
	}
	s.line("Small busybox image (a shell loop), shape 2/4 with a 1 GB disk, %d creates each, alternating; the API's create includes making and mounting the disk and waiting until the container runs.", apiRounds)
	s.table([]string{"operation", "p50", "p95", "p50 ratio", "p95 ratio"}, [][]string{
		{"`docker run -d` (baseline)", ms(median(runLat)), ms(percentile(runLat, 95)), "1.00", "1.00"},
		{"`POST /v1/instances` to 201 running", ms(median(apiLat)), ms(percentile(apiLat, 95)),
			ratio(median(apiLat), median(runLat)), ratio(percentile(apiLat, 95), percentile(runLat, 95))},
	})

	// Lifecycle latencies on one instance.
	in, _, err := create()
	if err != nil {
		return err
	}
	var stopLat, startLat, restartLat []time.Duration
	for i := 0; i < 10; i++ {
		for _, step := range []struct {
			lat *[]time.Duration
			fn  func(context.Context, string) (sdk.Ack, error)
		}{{&stopLat, cl.StopInstance}, {&startLat, cl.StartInstance}, {&restartLat, cl.RestartInstance}} {
			t0 := time.Now()
			if _, err := step.fn(ctx, in.ID); err != nil {
				return err
			}
			*step.lat = append(*step.lat, time.Since(t0))
		}
	}
	s.table([]string{"lifecycle call (10 each)", "p50", "p95"}, [][]string{
		{"stop", ms(median(stopLat)), ms(percentile(stopLat, 95))},
		{"start", ms(median(startLat)), ms(percentile(startLat, 95))},
		{"restart", ms(median(restartLat)), ms(percentile(restartLat, 95))},
	})

	// GET /v1/instances with 200 instances.
	const fleet = 200
	ids := []string{in.ID}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errc := make(chan error, fleet)
	sem := make(chan struct{}, 4)
	for i := 1; i < fleet; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			in, _, err := create()
			if err != nil {
				errc <- err
				return
			}
			mu.Lock()
			ids = append(ids, in.ID)
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(errc)
	defer func() {
		for _, id := range ids {
			cl.DeleteInstance(context.WithoutCancel(ctx), id)
		}
	}()
	if err := <-errc; err != nil {
		return fmt.Errorf("creating the fleet: %w", err)
	}
	dc, err := client.New(client.FromEnv)
	if err != nil {
		return err
	}
	defer dc.Close()
	var listLat, engineLat []time.Duration
	for i := 0; i < 50; i++ {
		t0 := time.Now()
		list, err := cl.Instances(ctx)
		if err != nil {
			return err
		}
		listLat = append(listLat, time.Since(t0))
		if len(list) != fleet {
			return fmt.Errorf("listed %d instances, want %d", len(list), fleet)
		}
		t0 = time.Now()
		res, err := dc.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: client.Filters{}.Add("label", "svc.install="+env.install)})
		if err != nil {
			return err
		}
		engineLat = append(engineLat, time.Since(t0))
		if len(res.Items) != fleet {
			return fmt.Errorf("engine lists %d containers, want %d", len(res.Items), fleet)
		}
	}
	s.table([]string{"listing 200 instances (50 times)", "p50", "p95", "p50 ratio"}, [][]string{
		{"engine `ContainerList` of their containers (baseline)", ms(median(engineLat)), ms(percentile(engineLat, 95)), "1.00"},
		{"`GET /v1/instances`", ms(median(listLat)), ms(percentile(listLat, 95)), ratio(median(listLat), median(engineLat))},
	})
	return nil
}

func ratio(a, b time.Duration) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

// benchServer is an in-process svcd on a temporary data directory.
type benchServer struct {
	srv      *server.Server
	client   *sdk.Client
	registry string
	install  string
	dir      string
	stopReg  func()
}

func startBenchServer(ctx context.Context) (*benchServer, error) {
	return startBenchServerWith(ctx, nil)
}

// startBenchServerWith lets a suite adjust the server's configuration.
func startBenchServerWith(ctx context.Context, adjust func(*server.Config)) (*benchServer, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("needs root (loop devices)")
	}
	dir, err := os.MkdirTemp("", "svc-bench-api-")
	if err != nil {
		return nil, err
	}
	cfg := server.Config{
		DataDir: dir, Listen: "127.0.0.1:0", RegistryListen: "127.0.0.1:0", AppsDomain: "localhost",
		Network: "svc", StopGrace: 5 * time.Second, ReconcileEvery: time.Hour,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if adjust != nil {
		adjust(&cfg)
	}
	srv, err := server.Start(ctx, cfg)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	install, _ := srv.Store.Meta(ctx, "install_id")
	reg, stopReg := testimage.ServeRegistry()
	return &benchServer{srv: srv, client: sdk.New(srv.URL, srv.Key), registry: reg, install: install, dir: dir, stopReg: stopReg}, nil
}

func (b *benchServer) close() {
	b.srv.Close()
	b.stopReg()
	os.RemoveAll(b.dir)
}
