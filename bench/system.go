package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/modeltest"
	"github.com/svc-dev/svc/internal/server"
	"github.com/svc-dev/svc/internal/sysimage"
	"github.com/svc-dev/svc/sdk"
)

// benchSystem times system templates end to end: create until the gateway
// reports healthy through the edge, for svc-general-small and svc-general,
// and the time to the first token of a streamed turn through the edge
// next to the same turn sent straight to the gateway in the container.
func benchSystem(ctx context.Context, r *report) error {
	sec := r.section("system")
	model, err := modeltest.Start(modeltest.Config{Models: []modeltest.Model{{ID: "bench"}}})
	if err != nil {
		return err
	}
	defer model.Close()
	env, err := startBenchServerWith(ctx, func(c *server.Config) { c.ModelUpstream, c.Model = model.URL, "bench" })
	if err != nil {
		return err
	}
	defer env.close()
	if err := publishSystem(ctx, env, "svc-general-small", "svc-general"); err != nil {
		return err
	}
	cl := env.client

	const creates = 8
	rows := [][]string{}
	for _, name := range []string{"svc-general-small", "svc-general"} {
		var running, healthy []time.Duration
		for i := 0; i < creates; i++ {
			start := time.Now()
			in, err := cl.CreateInstance(ctx, sdk.CreateInstance{Template: name})
			if err != nil {
				return err
			}
			running = append(running, time.Since(start))
			g := cl.Gateway(in.URL)
			for {
				h, err := g.Health(ctx, "")
				if err == nil && h.Healthy {
					break
				}
				if time.Since(start) > 3*time.Minute {
					return fmt.Errorf("%s never healthy: %v %+v", name, err, h)
				}
				time.Sleep(10 * time.Millisecond)
			}
			healthy = append(healthy, time.Since(start))
			if err := cl.DeleteInstance(ctx, in.ID); err != nil {
				return err
			}
		}
		rows = append(rows, []string{name, ms(median(running)), ms(median(healthy)), ms(percentile(healthy, 95))})
	}
	sec.line("Create until `GET /v1/health` through the edge reads `healthy: true` (polled every 10 ms), %d creates each, image already in the engine; the managed model points at a scripted upstream.", creates)
	sec.table([]string{"template", "create → 201 running (p50)", "create → healthy (p50)", "create → healthy (p95)"}, rows)

	// Time to first token: through the edge vs straight to the gateway.
	in, err := cl.CreateInstance(ctx, sdk.CreateInstance{Template: "svc-general-small"})
	if err != nil {
		return err
	}
	defer cl.DeleteInstance(context.WithoutCancel(ctx), in.ID)
	edge := cl.Gateway(in.URL)
	for {
		if h, err := edge.Health(ctx, ""); err == nil && h.Healthy {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	st, err := env.srv.Runtime.Inspect(ctx, in.ID)
	if err != nil {
		return err
	}
	row, err := env.srv.Store.Instance(ctx, in.ID)
	if err != nil {
		return err
	}
	direct := &sdk.Gateway{InstanceClient: &sdk.InstanceClient{
		BaseURL: "http://" + st.Addr.String() + ":3737",
		HTTP:    &http.Client{Transport: gatewayToken{row.GatewayToken, http.DefaultTransport}},
	}}
	firstToken := func(g *sdk.Gateway) (time.Duration, error) {
		start := time.Now()
		s, err := g.Stream(ctx, sdk.ResponseRequest{Input: "say something"})
		if err != nil {
			return 0, err
		}
		defer s.Close()
		var first time.Duration
		_, err = s.Collect(func(ev sdk.Event) {
			if first == 0 && ev.Name == "response.output_text.delta" {
				first = time.Since(start)
			}
		})
		if first == 0 && err == nil {
			err = fmt.Errorf("no text")
		}
		return first, err
	}
	var viaEdge, viaDirect []time.Duration
	for i := 0; i < 30; i++ {
		d, err := firstToken(direct)
		if err != nil {
			return fmt.Errorf("direct: %w", err)
		}
		viaDirect = append(viaDirect, d)
		if d, err = firstToken(edge); err != nil {
			return fmt.Errorf("edge: %w", err)
		}
		viaEdge = append(viaEdge, d)
	}
	sec.line("")
	sec.line("Time to the first `response.output_text.delta` of a streamed turn (new session each, general-a, scripted model answering at once through the managed model), 30 turns each, alternating.")
	sec.table([]string{"path", "p50", "p95", "p50 ratio"}, [][]string{
		{"straight to the gateway at the container's address (baseline)", ms(median(viaDirect)), ms(percentile(viaDirect, 95)), "1.00"},
		{"through the edge (`{id}.localhost`, key checked)", ms(median(viaEdge)), ms(percentile(viaEdge, 95)), ratio(median(viaEdge), median(viaDirect))},
	})
	return nil
}

// gatewayToken proves a direct request to the gateway, as the edge does.
type gatewayToken struct {
	token string
	next  http.RoundTripper
}

func (g gatewayToken) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Svc-Gateway-Token", g.token)
	return g.next.RoundTrip(r)
}

// publishSystem builds (from the engine's cache when it can) and
// publishes system images into env's data directory.
func publishSystem(ctx context.Context, env *benchServer, names ...string) error {
	b, closeDocker, err := imageBuilder(ctx, env.dir)
	if err != nil {
		return err
	}
	defer closeDocker()
	p := &sysimage.Publisher{Docker: b.Docker, Store: env.srv.Store, Registry: env.srv.Registry}
	_, err = sysimage.Release(ctx, b, p, names...)
	return err
}

// imageBuilder builds svc-gateway into dir and returns a system image
// Builder on the local engine that copies it into the images. Progress
// goes to stderr with SVC_BENCH_VERBOSE set.
func imageBuilder(ctx context.Context, dir string) (*sysimage.Builder, func(), error) {
	gateway := filepath.Join(dir, "svc-gateway")
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", gateway, "./cmd/svc-gateway")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, nil, fmt.Errorf("build svc-gateway: %v: %s", err, out)
	}
	c, err := client.New(client.FromEnv)
	if err != nil {
		return nil, nil, err
	}
	progress := io.Writer(io.Discard)
	if os.Getenv("SVC_BENCH_VERBOSE") != "" {
		progress = os.Stderr
	}
	return &sysimage.Builder{Docker: c, Gateway: gateway, Progress: progress}, func() { c.Close() }, nil
}
