package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/registry"
)

const (
	benchLayers     = 5
	benchLayerBytes = 40 << 20 // random data: gzip cannot shrink it
	benchRuns       = 5
)

// benchRegistry measures copying a ~200 MB image from a local source
// registry into ours, next to plain io.Copy of the same blobs over HTTP from
// the same source, and the engine's pull of the image from our registry.
func benchRegistry(ctx context.Context, r *report) error {
	sec := r.section("registry")

	// The source: ggcr's in-memory registry on loopback.
	srcLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srcSrv := &http.Server{Handler: ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))}
	go srcSrv.Serve(srcLn)
	defer srcSrv.Close()
	srcHost := srcLn.Addr().String()

	img, err := random.Image(benchLayerBytes, benchLayers)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	srcRef := srcHost + "/bench/big:v1"
	ref, err := name.ParseReference(srcRef)
	if err != nil {
		return err
	}
	if err := remote.Write(ref, img, remote.WithContext(ctx)); err != nil {
		return fmt.Errorf("push to source: %w", err)
	}
	m, err := img.Manifest()
	if err != nil {
		return err
	}
	blobs := []string{m.Config.Digest.String()}
	size := m.Config.Size
	for _, l := range m.Layers {
		blobs = append(blobs, l.Digest.String())
		size += l.Size
	}
	img = nil // the source holds its own copy; let ours go before measuring memory

	// Baseline: read every blob over HTTP, one after the other.
	copyTimes, err := repeat(benchRuns, func() (time.Duration, error) {
		start := time.Now()
		for _, d := range blobs {
			resp, err := http.Get("http://" + srcHost + "/v2/bench/big/blobs/" + d)
			if err != nil {
				return 0, err
			}
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil {
				return 0, err
			}
		}
		return time.Since(start), nil
	})
	if err != nil {
		return err
	}

	// A floor for any import: the same reads, hashed and written to disk.
	fileTimes, err := repeat(benchRuns, func() (time.Duration, error) {
		dir, err := os.MkdirTemp("", "svc-bench-copy-")
		if err != nil {
			return 0, err
		}
		defer os.RemoveAll(dir)
		start := time.Now()
		for i, d := range blobs {
			if err := copyToFile(srcHost, d, filepath.Join(dir, strconv.Itoa(i))); err != nil {
				return 0, err
			}
		}
		return time.Since(start), nil
	})
	if err != nil {
		return err
	}

	// Import into a fresh registry each run, so every blob is copied.
	var imported registry.Image
	var peakHeap uint64
	importTimes, err := repeat(benchRuns, func() (time.Duration, error) {
		dir, err := os.MkdirTemp("", "svc-bench-registry-")
		if err != nil {
			return 0, err
		}
		defer os.RemoveAll(dir)
		reg, err := newBenchRegistry(ctx, dir)
		if err != nil {
			return 0, err
		}
		defer reg.Close()
		stop := sampleHeap(&peakHeap)
		start := time.Now()
		imported, err = reg.Import(ctx, srcRef, nil, "system/bench", "v1")
		d := time.Since(start)
		stop()
		return d, err
	})
	if err != nil {
		return err
	}

	// One registry for the rest: a repeat import (blobs present) and pulls.
	dir, err := os.MkdirTemp("", "svc-bench-registry-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	reg, err := newBenchRegistry(ctx, dir)
	if err != nil {
		return err
	}
	defer reg.Close()
	if _, err := reg.Import(ctx, srcRef, nil, "system/bench", "v1"); err != nil {
		return err
	}
	againTimes, err := repeat(benchRuns, func() (time.Duration, error) {
		start := time.Now()
		_, err := reg.Import(ctx, srcRef, nil, "system/bench", "v1")
		return time.Since(start), err
	})
	if err != nil {
		return err
	}

	base := median(copyTimes)
	rows := [][]string{
		rateRow("io.Copy of the blobs over HTTP (baseline)", size, copyTimes, base),
		rateRow("io.Copy of the blobs to files, with sha256", size, fileTimes, base),
		rateRow("Import into an empty registry", size, importTimes, base),
		rateRow("Import again (manifest already stored: nothing copied)", 0, againTimes, base),
	}

	pullNote := ""
	if pullTimes, err := benchEnginePull(ctx, reg, imported); err != nil {
		pullNote = fmt.Sprintf("Engine pull not measured: %v", err)
	} else {
		rows = append(rows, rateRow("dockerd pull from our registry (by digest, then removed)", size, pullTimes, base))
	}

	sec.line("Image: %d layers of %d MiB random data, %.1f MB stored (config + gzipped layers); source is go-containerregistry's in-memory registry on 127.0.0.1; median of %d runs; ratio is time relative to the io.Copy baseline.",
		benchLayers, benchLayerBytes>>20, float64(size)/1e6, benchRuns)
	sec.table([]string{"operation", "median", "MB/s", "runs", "× baseline time"}, rows)
	sec.line("Peak Go heap growth during an import: %.1f MB (the image is %.1f MB; blobs stream).", float64(peakHeap)/1e6, float64(size)/1e6)
	if pullNote != "" {
		sec.line("%s", pullNote)
	}
	return nil
}

func newBenchRegistry(ctx context.Context, dir string) (*registry.Registry, error) {
	return registry.New(ctx, registry.Config{
		Dir: dir, Username: "bench", Password: "bench-password",
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
}

// benchEnginePull serves reg on loopback and times dockerd pulling img.
func benchEnginePull(ctx context.Context, reg *registry.Registry, img registry.Image) ([]time.Duration, error) {
	docker, err := client.New(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, err
	}
	defer docker.Close()
	if _, err := docker.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		return nil, fmt.Errorf("no dockerd: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: reg.Handler()}
	go srv.Serve(ln)
	defer srv.Close()
	reg.SetAddr(ln.Addr().String())

	cred := reg.PullAuth()
	auth, _ := json.Marshal(map[string]string{"username": cred.Username, "password": cred.Password, "serveraddress": reg.Addr()})
	ref := reg.PullRef("system/bench", img.Digest)
	return repeat(benchRuns, func() (time.Duration, error) {
		start := time.Now()
		resp, err := docker.ImagePull(ctx, ref, client.ImagePullOptions{RegistryAuth: base64.URLEncoding.EncodeToString(auth)})
		if err != nil {
			return 0, err
		}
		err = resp.Wait(ctx)
		resp.Close()
		d := time.Since(start)
		if err != nil {
			return 0, err
		}
		_, err = docker.ImageRemove(ctx, ref, client.ImageRemoveOptions{Force: true, PruneChildren: true})
		return d, err
	})
}

// copyToFile downloads one blob from the source into file, hashing it.
func copyToFile(host, digest, file string) error {
	resp, err := http.Get("http://" + host + "/v2/bench/big/blobs/" + digest)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(f, h), resp.Body); err != nil {
		f.Close()
		return err
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != digest {
		f.Close()
		return fmt.Errorf("blob %s hashed to %s", digest, got)
	}
	return f.Close()
}

func repeat(n int, f func() (time.Duration, error)) ([]time.Duration, error) {
	var out []time.Duration
	for range n {
		d, err := f()
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func rateRow(label string, size int64, ds []time.Duration, base time.Duration) []string {
	med := median(ds)
	runs := make([]string, len(ds))
	for i, d := range ds {
		runs[i] = d.Round(time.Millisecond).String()
	}
	rate := "—"
	if size > 0 {
		rate = fmt.Sprintf("%.0f", float64(size)/1e6/med.Seconds())
	}
	return []string{
		label,
		med.Round(time.Millisecond).String(),
		rate,
		strings.Join(runs, ", "),
		fmt.Sprintf("%.2f", med.Seconds()/base.Seconds()),
	}
}

// sampleHeap records the largest growth of the Go heap over its value at the
// start, until the returned stop is called.
func sampleHeap(peak *uint64) (stop func()) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	start := ms.HeapAlloc
	var done atomic.Bool
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for !done.Load() {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > start && ms.HeapAlloc-start > *peak {
				*peak = ms.HeapAlloc - start
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return func() { done.Store(true); <-finished }
}
