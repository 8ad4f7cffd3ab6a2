package sysimage

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/jsonstream"
	"github.com/moby/moby/client"
)

// DebianRef names the operating-system image every system image starts
// from, in the engine: Debian bookworm, pulled or made locally.
const DebianRef = "svc/debian:bookworm"

// debianPull is the official slim image, pulled where a registry answers.
const debianPull = "debian:bookworm-slim"

// debianTarball is the slim root made by debootstrap, kept in the cache so
// the engine can lose the image and get it back in seconds.
const debianTarball = "debian-bookworm-minbase.tar"

// pullTimeout bounds the pull attempt. Where no registry is reachable the
// engine fails at name resolution within a second or two; where one is,
// the slim image is about 30 MB.
const pullTimeout = 5 * time.Minute

// debian returns the engine's image ID of DebianRef, making it first if
// missing: a pull where a registry answers, else debootstrap (its root
// cached as a tarball) and an import.
func (b *Builder) debian(ctx context.Context) (string, error) {
	if id, err := b.imageID(ctx, DebianRef); err == nil || !cerrdefs.IsNotFound(err) {
		return id, err
	}
	unlock, err := lockFile(ctx, filepath.Join(b.cacheDir(), "debian.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	// Another process may have made it while we waited for the lock.
	if id, err := b.imageID(ctx, DebianRef); err == nil || !cerrdefs.IsNotFound(err) {
		return id, err
	}
	tarball := filepath.Join(b.cacheDir(), debianTarball)
	if _, err := os.Stat(tarball); err != nil {
		b.logf("debian: pulling %s", debianPull)
		perr := b.pull(ctx, debianPull)
		if perr == nil {
			if _, err := b.Docker.ImageTag(ctx, client.ImageTagOptions{Source: debianPull, Target: DebianRef}); err != nil {
				return "", fmt.Errorf("tag %s: %w", DebianRef, err)
			}
			return b.imageID(ctx, DebianRef)
		}
		b.logf("debian: pull failed (%v); making the root with debootstrap", firstLine(perr.Error()))
		if err := b.Debootstrap(ctx, tarball); err != nil {
			return "", err
		}
	}
	b.logf("debian: importing %s", tarball)
	if err := b.importRoot(ctx, tarball); err != nil {
		return "", err
	}
	return b.imageID(ctx, DebianRef)
}

func (b *Builder) pull(ctx context.Context, ref string) error {
	ctx, cancel := context.WithTimeout(ctx, pullTimeout)
	defer cancel()
	resp, err := b.Docker.ImagePull(ctx, ref, client.ImagePullOptions{})
	if err != nil {
		return err
	}
	defer resp.Close()
	return resp.Wait(ctx)
}

// Debootstrap makes a minbase bookworm root, slims it and writes it as a
// tar to tarball (through a temporary name, so a crash leaves no half
// file in the cache). Builds call it when the engine has no Debian image
// and none can be pulled; the bench times it.
func (b *Builder) Debootstrap(ctx context.Context, tarball string) error {
	if _, err := exec.LookPath("debootstrap"); err != nil {
		return errors.New("debian: no registry answered and debootstrap is not installed (apt-get install debootstrap; scripts/setup.sh does it)")
	}
	root, err := os.MkdirTemp(b.cacheDir(), "rootfs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	args := []string{"--variant=minbase", "bookworm", root}
	if b.Mirror != "" {
		args = append(args, b.Mirror)
	}
	start := time.Now()
	b.logf("debian: debootstrap %s", strings.Join(args, " "))
	if err := b.runLogged(ctx, "debootstrap", exec.CommandContext(ctx, "debootstrap", args...)); err != nil {
		return fmt.Errorf("debian: debootstrap: %w", err)
	}
	if err := hostSources(root); err != nil {
		return err
	}
	if err := slim(root); err != nil {
		return fmt.Errorf("debian: slim the root: %w", err)
	}
	tmp := tarball + ".tmp"
	tar := exec.CommandContext(ctx, "tar", "--numeric-owner", "--xattrs", "--xattrs-include=*", "-C", root, "-cf", tmp, ".")
	if out, err := tar.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("debian: tar the root: %w: %s", err, out)
	}
	if err := os.Rename(tmp, tarball); err != nil {
		return err
	}
	b.logf("debian: root made in %s", time.Since(start).Round(time.Second))
	return nil
}

// hostSources gives the root the host's apt sources when the host runs
// bookworm too: they are known to be reachable from here, and they add the
// updates and security suites that debootstrap's one line leaves out.
func hostSources(root string) error {
	osr, err := os.ReadFile("/etc/os-release")
	if err != nil || !strings.Contains(string(osr), "VERSION_CODENAME=bookworm") {
		return nil
	}
	src, err := os.ReadFile("/etc/apt/sources.list.d/debian.sources")
	if err != nil || !strings.Contains(string(src), "bookworm") {
		return nil
	}
	if err := os.WriteFile(filepath.Join(root, "etc/apt/sources.list.d/debian.sources"), src, 0o644); err != nil {
		return err
	}
	return os.Remove(filepath.Join(root, "etc/apt/sources.list"))
}

// importRoot imports the root tarball as DebianRef, with the PATH and
// shell an official image has.
func (b *Builder) importRoot(ctx context.Context, tarball string) error {
	f, err := os.Open(tarball)
	if err != nil {
		return err
	}
	defer f.Close()
	resp, err := b.Docker.ImageImport(ctx, client.ImageImportSource{Source: f, SourceName: "-"}, DebianRef, client.ImageImportOptions{
		Message: "debootstrap --variant=minbase bookworm, slimmed (svc)",
		Changes: []string{
			"ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			`CMD ["bash"]`,
		},
	})
	if err != nil {
		return fmt.Errorf("debian: import: %w", err)
	}
	defer resp.Close()
	if err := readStream(resp, func(jsonstream.Message) {}); err != nil {
		return fmt.Errorf("debian: import: %w", err)
	}
	return nil
}

// runLogged runs cmd, passing its output to the progress log line by line
// (each prefixed with name) when verbose, and keeping the tail for the
// error otherwise.
func (b *Builder) runLogged(ctx context.Context, name string, cmd *exec.Cmd) error {
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		return err
	}
	pw.Close()
	var tail []string
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := sc.Text()
		if b.Verbose {
			b.logf("%s: %s", name, line)
		}
		if tail = append(tail, line); len(tail) > 20 {
			tail = tail[1:]
		}
	}
	pr.Close()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("%w\n%s", err, strings.Join(tail, "\n"))
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
