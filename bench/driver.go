package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/runtime"
	"github.com/svc-dev/svc/internal/runtime/docker"
	"github.com/svc-dev/svc/internal/runtime/docker/disk"
	"github.com/svc-dev/svc/internal/testimage"
)

// driverRounds is how many instances each latency is measured over.
const driverRounds = 25

// benchDriver times the Docker driver's create+start of a small busybox
// image against `docker run -d` of the same image (and the bare API calls
// it makes), then stop and start, remove, and disk creation alone.
func benchDriver(ctx context.Context, r *report) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("needs root (loop devices)")
	}
	reg, stopReg := testimage.ServeRegistry()
	defer stopReg()
	img, err := testimage.PushImage(reg, "bench/busybox", testimage.Options{
		// Exits on TERM, so stop measures the engine, not a grace period.
		Entrypoint: []string{"/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1 & wait $!; done"},
	})
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "svc-bench-driver-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	d, err := docker.New(ctx, docker.Config{DataDir: dir, Install: "bench-" + rand.Text()[:6]})
	if err != nil {
		return err
	}
	defer d.Close()
	c, err := client.New(client.FromEnv)
	if err != nil {
		return err
	}
	defer c.Close()
	defer c.ImageRemove(context.WithoutCancel(ctx), img.Ref, client.ImageRemoveOptions{Force: true})

	spec := func() runtime.Spec {
		return runtime.Spec{
			InstanceID: strings.ToLower(rand.Text()[:10]), Image: img.Ref,
			CPUs: 2, MemoryBytes: 4 << 30, DiskBytes: 4 << 30,
		}
	}
	// The first create pulls the image and formats the 4 GiB template.
	first := spec()
	t0 := time.Now()
	if err := d.Create(ctx, first); err != nil {
		return err
	}
	firstCreate := time.Since(t0)
	if err := d.Remove(ctx, first.InstanceID); err != nil {
		return err
	}

	var driverUp, dockerRun, apiUp, stop, start, remove []time.Duration
	for i := range driverRounds {
		// Alternate the order so drift on a noisy host hits both sides.
		steps := []func() error{
			func() error {
				s := spec()
				t := time.Now()
				if err := d.Create(ctx, s); err != nil {
					return err
				}
				if err := d.Start(ctx, s.InstanceID); err != nil {
					return err
				}
				driverUp = append(driverUp, time.Since(t))
				t = time.Now()
				if err := d.Stop(ctx, s.InstanceID, 10*time.Second); err != nil {
					return err
				}
				stop = append(stop, time.Since(t))
				t = time.Now()
				if err := d.Start(ctx, s.InstanceID); err != nil {
					return err
				}
				start = append(start, time.Since(t))
				t = time.Now()
				if err := d.Remove(ctx, s.InstanceID); err != nil {
					return err
				}
				remove = append(remove, time.Since(t))
				return nil
			},
			func() error {
				t := time.Now()
				out, err := exec.CommandContext(ctx, "docker", "run", "-d", img.Ref).Output()
				if err != nil {
					return fmt.Errorf("docker run: %w", err)
				}
				dockerRun = append(dockerRun, time.Since(t))
				return drvRemove(ctx, c, strings.TrimSpace(string(out)))
			},
			func() error {
				t := time.Now()
				res, err := c.ContainerCreate(ctx, client.ContainerCreateOptions{Image: img.Ref})
				if err != nil {
					return err
				}
				if _, err := c.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
					return err
				}
				apiUp = append(apiUp, time.Since(t))
				return drvRemove(ctx, c, res.ID)
			},
		}
		for j := range steps {
			if err := steps[(i+j)%len(steps)](); err != nil {
				return err
			}
		}
	}

	diskMake, diskMount, mkfsLazy, mkfsFull, cpSparse, err := benchDisks(dir)
	if err != nil {
		return err
	}

	row := func(name string, ds []time.Duration, note string) []string {
		return []string{name, drvMs(drvPct(ds, 50)), drvMs(drvPct(ds, 95)), fmt.Sprint(len(ds)), note}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	ratio := float64(drvPct(driverUp, 50)) / float64(drvPct(dockerRun, 50))
	apiRatio := float64(drvPct(driverUp, 50)) / float64(drvPct(apiUp, 50))
	r.section("driver").
		line("Docker driver against the engine on this host (dockerd %s; load average at the end: %s). Busybox image from a loopback registry, already pulled; instances of 2 CPUs, 4 GiB memory, 4 GiB disk.",
			drvEngineVersion(ctx, c), strings.Join(strings.Fields(string(load))[:3], " ")).
		line("").
		line("**create+start p50 is %.2fx `docker run -d` p50** (target: within 1.5x); %.2fx the bare API create+start, which skips the CLI's own start-up.", ratio, apiRatio).
		table([]string{"measure", "p50 ms", "p95 ms", "n", "what"}, [][]string{
			row("driver Create+Start", driverUp, "pull check, disk from template + loop mount, seed from the image, container create, start"),
			row("`docker run -d`", dockerRun, "the CLI, default bridge, no disk"),
			row("API create+start", apiUp, "ContainerCreate + ContainerStart, no disk, no options"),
			row("driver Stop", stop, "shell that exits on TERM"),
			row("driver Start (stopped)", start, "disk already mounted"),
			row("driver Remove", remove, "container, unmount, loop device, files"),
		}).
		line("First Create of the run (pulls the image, formats the 4 GiB template): %s ms.", drvMs(firstCreate)).
		line("").
		line("Disk creation alone, 4 GiB:").
		table([]string{"method", "p50 ms", "p95 ms", "n", "what"}, [][]string{
			row("template sparse copy (used)", diskMake, "in process: SEEK_DATA/SEEK_HOLE + copy_file_range + fsync"),
			row("loop attach + mount", diskMount, "ioctls, autoclear"),
			row("`cp --sparse=always` template", cpSparse, "same copy by the coreutils CLI"),
			row("`mkfs.ext4` lazy init", mkfsLazy, "truncate + mkfs -E lazy_itable_init=1,lazy_journal_init=1"),
			row("`mkfs.ext4` full init", mkfsFull, "what the template is made with"),
		})
	return nil
}

// benchDisks times the ways to make a 4 GiB disk.
func benchDisks(dir string) (make_, mount, mkfsLazy, mkfsFull, cpSparse []time.Duration, err error) {
	const size = 4 << 30
	tm := &disk.Templates{Dir: filepath.Join(dir, "tmpl")}
	os.MkdirAll(tm.Dir, 0o700)
	if err := tm.Make(filepath.Join(dir, "warm.img"), size); err != nil {
		return nil, nil, nil, nil, nil, err
	}
	tmpl := filepath.Join(tm.Dir, fmt.Sprintf(".template-%d.img", int64(size)))
	timeIt := func(dst *[]time.Duration, f func() error) error {
		t := time.Now()
		if err := f(); err != nil {
			return err
		}
		*dst = append(*dst, time.Since(t))
		return nil
	}
	for i := range driverRounds {
		img := filepath.Join(dir, fmt.Sprintf("d%d.img", i))
		mnt := filepath.Join(dir, fmt.Sprintf("m%d", i))
		steps := []error{
			timeIt(&make_, func() error { return tm.Make(img, size) }),
			timeIt(&mount, func() error { return disk.Mount(img, mnt) }),
			disk.Unmount(img, mnt),
			os.Remove(img),
			timeIt(&cpSparse, func() error { return exec.Command("cp", "--sparse=always", tmpl, img).Run() }),
			os.Remove(img),
			timeIt(&mkfsLazy, func() error {
				if err := os.Truncate(img, 0); err != nil && !os.IsNotExist(err) {
					return err
				}
				f, err := os.Create(img)
				if err != nil {
					return err
				}
				f.Truncate(size)
				f.Close()
				return exec.Command("mkfs.ext4", "-q", "-F", "-m", "0", "-E", "lazy_itable_init=1,lazy_journal_init=1", img).Run()
			}),
			os.Remove(img),
			timeIt(&mkfsFull, func() error { return disk.Format(img, size) }),
			os.Remove(img),
		}
		for _, e := range steps {
			if e != nil {
				return nil, nil, nil, nil, nil, e
			}
		}
	}
	return make_, mount, mkfsLazy, mkfsFull, cpSparse, nil
}

func drvEngineVersion(ctx context.Context, c *client.Client) string {
	v, err := c.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return "?"
	}
	return v.Version
}

func drvPct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))]
}

func drvMs(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }

// drvRemove removes a baseline container, untimed.
func drvRemove(ctx context.Context, c *client.Client, id string) error {
	_, err := c.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true})
	return err
}
