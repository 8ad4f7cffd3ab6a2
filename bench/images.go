package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/svc-dev/svc/internal/sysimage"
)

// benchImages measures the system images: each one's size in the engine
// and as stored (compressed) in the registry, its build from nothing (the
// engine's cache off; the Debian root made again with debootstrap) and
// cached (a rebuild with no change), and how long publishing takes (docker
// save into the registry). Every build runs on this machine's engine and
// Debian mirror, so cold figures include the package downloads.
func benchImages(ctx context.Context, r *report) error {
	sec := r.section("images")
	work, err := os.MkdirTemp("", "svc-bench-images-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	b, closeDocker, err := imageBuilder(ctx, work)
	if err != nil {
		return err
	}
	defer closeDocker()

	// The Debian root from nothing: debootstrap, slim, tar. The engine's
	// svc/debian image is left alone (other checkouts share it).
	start := time.Now()
	if err := b.Debootstrap(ctx, filepath.Join(work, "debian.tar")); err != nil {
		return err
	}
	debootstrap := time.Since(start)

	b.NoCache = true
	cold, err := b.BuildWithBase(ctx)
	if err != nil {
		return err
	}
	// The first build with the cache on after cold ones can still miss: each
	// cold build left its own copy of a shared step (git and curl), and the
	// engine may pick one whose next step it does not hold. The second
	// is the rebuild-with-no-change figure.
	b.NoCache = false
	var cached []sysimage.Built
	for range 2 {
		if cached, err = b.BuildWithBase(ctx); err != nil {
			return err
		}
	}
	data, err := sysimage.OpenData(ctx, filepath.Join(work, "data"))
	if err != nil {
		return err
	}
	defer data.Close()
	p := &sysimage.Publisher{Docker: b.Docker, Store: data.Store, Registry: data.Registry}

	sec.line("Debian root (debootstrap --variant=minbase bookworm, slimmed, tarred): %s.", debootstrap.Round(time.Second))
	sec.line("Cold: every step built again (`NoCache`), packages downloaded from the Debian mirror and npm's registry;")
	sec.line("cached: the same build again with nothing changed. Stored: config plus gzip layers in the embedded registry;")
	sec.line("layers shared between images (base, git/curl, Chromium) are stored once, so the total is less than the sum.")
	rows := [][]string{}
	var coldSum, storedSum time.Duration
	for i, img := range cold {
		stored, publish := "-", "-"
		if img.Name != sysimage.Base {
			pub, err := p.Publish(ctx, cached[i])
			if err != nil {
				return err
			}
			stored, publish = megabytes(pub.Stored), secs(pub.Took)
			storedSum += pub.Took
		}
		coldSum += img.Took
		rows = append(rows, []string{img.Name, megabytes(cached[i].Size), stored, secs(img.Took), secs(cached[i].Took), publish})
	}
	sec.table([]string{"image", "engine size", "stored (compressed)", "cold build", "cached build", "publish"}, rows)
	regSize, _ := dirSize(filepath.Join(work, "data", "registry"))
	sec.line("All eight from nothing: %s of builds after the Debian root, %s of publishing; the registry holds %s for all eight.",
		coldSum.Round(time.Second), storedSum.Round(time.Second), megabytes(regSize))
	return nil
}

func megabytes(n int64) string { return fmt.Sprintf("%.0f MB", float64(n)/1e6) }

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// dirSize sums the sizes of the regular files under dir.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return err
	})
	return n, err
}
