package sysimage

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/build"
	"github.com/moby/moby/api/types/jsonstream"
	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/template"
)

// Build builds the named system templates (every one when names is
// empty), after the Debian root and base, and returns them in catalog
// order.
func (b *Builder) Build(ctx context.Context, names ...string) ([]Built, error) {
	imgs, err := b.BuildWithBase(ctx, names...)
	if err != nil {
		return nil, err
	}
	return imgs[1:], nil
}

// BuildWithBase is Build, with base first in the result.
func (b *Builder) BuildWithBase(ctx context.Context, names ...string) ([]Built, error) {
	if len(names) == 0 {
		names = Names()
	}
	for _, n := range names {
		if _, ok := template.SystemByName(n); !ok {
			return nil, fmt.Errorf("%q is not a system template (one of %s)", n, strings.Join(Names(), ", "))
		}
	}
	base, err := b.base(ctx)
	if err != nil {
		return nil, err
	}
	out := []Built{base}
	for _, n := range Names() {
		if !slices.Contains(names, n) {
			continue
		}
		sys, _ := template.SystemByName(n)
		gateway := ""
		if sys.Gateway() {
			gateway = b.Gateway
			if _, err := os.Stat(gateway); gateway == "" || err != nil {
				return nil, fmt.Errorf("%s runs svc-gateway: no static svc-gateway binary at %q (make build makes one)", n, gateway)
			}
		}
		img, err := b.build(ctx, n, map[string]string{"BASE": base.ID}, gateway, b.Labels)
		if err != nil {
			return nil, err
		}
		out = append(out, img)
	}
	return out, nil
}

// base builds the Debian root (if missing) and base, once per Builder and
// cache setting: base's build context is embedded, so it cannot change
// while the process runs.
func (b *Builder) base(ctx context.Context) (Built, error) {
	b.baseMu.Lock()
	defer b.baseMu.Unlock()
	if b.built != nil && b.builtNoCache == b.NoCache {
		return *b.built, nil
	}
	debian, err := b.debian(ctx)
	if err != nil {
		return Built{}, err
	}
	base, err := b.build(ctx, Base, map[string]string{"DEBIAN": debian}, "", nil)
	if err != nil {
		return Built{}, err
	}
	b.built, b.builtNoCache = &base, b.NoCache
	return base, nil
}

// build builds one image from images/<name> and tags it svc/<name>:latest.
func (b *Builder) build(ctx context.Context, name string, args map[string]string, gateway string, labels map[string]string) (Built, error) {
	unlock, err := lockFile(ctx, filepath.Join(b.cacheDir(), "build.lock"))
	if err != nil {
		return Built{}, err
	}
	defer unlock()
	ref := EngineRepo(name) + ":latest"
	before, err := b.imageID(ctx, ref)
	if err != nil && !cerrdefs.IsNotFound(err) {
		return Built{}, err
	}

	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(buildContext(pw, name, gateway)) }()
	defer pr.Close()
	buildArgs := map[string]*string{}
	for k, v := range args {
		buildArgs[k] = &v
	}
	start := time.Now()
	b.logf("%s: building", name)
	resp, err := b.Docker.ImageBuild(ctx, pr, client.ImageBuildOptions{
		Tags:        []string{ref},
		Version:     build.BuilderV1,
		Remove:      true,
		NoCache:     b.NoCache,
		ForceRemove: true,
		BuildArgs:   buildArgs,
		Labels:      labels,
	})
	if err != nil {
		return Built{}, fmt.Errorf("build %s: %w", name, err)
	}
	defer resp.Body.Close()
	out := &buildOutput{b: b, name: name, start: start, step: start}
	stopBeat := out.heartbeat(30 * time.Second)
	err = readStream(resp.Body, out.message)
	stopBeat()
	if err != nil {
		return Built{}, fmt.Errorf("build %s: %w%s", name, err, out.tailText())
	}
	if out.id == "" {
		return Built{}, fmt.Errorf("build %s: the engine reported no image%s", name, out.tailText())
	}
	res, err := b.Docker.ImageInspect(ctx, out.id)
	if err != nil {
		return Built{}, err
	}
	img := Built{Name: name, ID: res.ID, Size: res.Size, Cached: res.ID == before, Took: time.Since(start)}
	how := ""
	if img.Cached {
		how = ", unchanged"
	}
	b.logf("%s: built %s (%s) in %s%s", name, short(img.ID), megabytes(img.Size), img.Took.Round(100*time.Millisecond), how)
	return img, nil
}

// buildOutput turns the engine's build stream into progress lines: one per
// Dockerfile step, everything in verbose mode, and the last lines kept for
// an error.
type buildOutput struct {
	b     *Builder
	name  string
	start time.Time

	mu      sync.Mutex
	id      string
	tail    []string
	step    time.Time // when the current step started or was last reported
	stepNum string    // "15/24"
}

// heartbeat reports a step that runs long (an npm install can take
// minutes without a new step line) every interval, so a build is never
// silent for long; the returned func stops it.
func (o *buildOutput) heartbeat(interval time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(interval / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				o.beat(now, interval)
			}
		}
	}()
	return func() { close(done) }
}

// beat prints a still-running line when nothing was reported for interval.
func (o *buildOutput) beat(now time.Time, interval time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.b.Verbose || o.stepNum == "" || now.Sub(o.step) < interval {
		return
	}
	o.step = now
	last := ""
	// The step's own latest line; the engine's " ---> " bookkeeping says
	// nothing about progress.
	if n := len(o.tail); n > 0 && !strings.HasPrefix(o.tail[n-1], "Step ") && !strings.HasPrefix(o.tail[n-1], " ---> ") {
		last = ": " + clip(o.tail[n-1], 80)
	}
	o.b.logf("  %s %6s  ... still on step %s%s", o.name, "+"+now.Sub(o.start).Round(time.Second).String(), o.stepNum, last)
}

func (o *buildOutput) message(m jsonstream.Message) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if m.Aux != nil {
		var aux struct{ ID string }
		if json.Unmarshal(*m.Aux, &aux) == nil && aux.ID != "" {
			o.id = aux.ID
		}
	}
	for _, line := range strings.Split(strings.TrimRight(m.Stream, "\n"), "\n") {
		line = ansiRE.ReplaceAllString(strings.TrimRight(line, "\r "), "")
		if line == "" {
			continue
		}
		if o.tail = append(o.tail, line); len(o.tail) > 30 {
			o.tail = o.tail[1:]
		}
		switch {
		case o.b.Verbose:
			o.b.logf("  %s | %s", o.name, line)
		case strings.HasPrefix(line, "Step "):
			o.step = time.Now()
			o.stepNum, _, _ = strings.Cut(strings.TrimPrefix(line, "Step "), " ")
			o.b.logf("  %s %6s  %s", o.name, "+"+time.Since(o.start).Round(time.Second).String(), clip(line, 110))
		}
	}
}

func (o *buildOutput) tailText() string {
	if len(o.tail) == 0 {
		return ""
	}
	return "\n" + strings.Join(o.tail, "\n")
}

// ansiRE matches the colour codes the engine wraps a step's stderr in.
var ansiRE = regexp.MustCompile(`\x1b\[[0-9;]*m`)

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// short is an image ID's first 12 hex digits, as docker prints it.
func short(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		id = id[:12]
	}
	return id
}

func megabytes(n int64) string { return fmt.Sprintf("%.0f MB", float64(n)/1e6) }
