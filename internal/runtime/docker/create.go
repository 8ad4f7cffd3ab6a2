package docker

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/runtime"
)

// Console logs are capped per instance: json-file rotates at logMaxSize and
// keeps logMaxFiles files.
const (
	logMaxSize  = "10m"
	logMaxFiles = "3"
)

// Create pulls the image, makes and mounts the disk, seeds it with the
// image's home directories and creates the container. The pull and the disk
// are independent and run at once; so do the seed and the container create.
// An existing container is left as it is.
func (d *Driver) Create(ctx context.Context, spec runtime.Spec) error {
	id := spec.InstanceID
	if err := checkID(id); err != nil {
		return err
	}
	if spec.Image == "" {
		return fmt.Errorf("docker: create %s: no image", id)
	}
	unlock := d.locks.lock(id)
	defer unlock()

	type diskResult struct {
		needSeed bool
		err      error
	}
	disk := make(chan diskResult, 1)
	go func() {
		needSeed, err := d.ensureDisk(id, spec.DiskBytes)
		disk <- diskResult{needSeed, err}
	}()
	layers, pullErr := d.ensureImage(ctx, spec.Image, spec.PullAuth)
	dr := <-disk
	if err := errors.Join(pullErr, dr.err); err != nil {
		return err
	}

	seeded := make(chan error, 1)
	if dr.needSeed {
		go func() { seeded <- d.seed(ctx, id, spec.Image, layers) }()
	} else {
		seeded <- nil
	}
	createErr := d.createContainer(ctx, spec)
	return errors.Join(createErr, <-seeded)
}

func (d *Driver) createContainer(ctx context.Context, spec runtime.Spec) error {
	id := spec.InstanceID
	env := make([]string, 0, len(spec.Env))
	for k, v := range spec.Env {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	mnt := d.mountPath(id)
	host := &container.HostConfig{
		NetworkMode:   container.NetworkMode(d.networkID),
		RestartPolicy: container.RestartPolicy{Name: container.RestartPolicyUnlessStopped},
		LogConfig: container.LogConfig{Type: "json-file", Config: map[string]string{
			"max-size": logMaxSize, "max-file": logMaxFiles,
		}},
		// Bind mounts (not -v binds) fail to start when the source is
		// missing instead of creating it: after a reboot an unmounted disk
		// stops the container rather than letting it write to the host.
		Mounts: []mount.Mount{
			{Type: mount.TypeBind, Source: filepath.Join(mnt, "home"), Target: "/home"},
			{Type: mount.TypeBind, Source: filepath.Join(mnt, "root"), Target: "/root"},
		},
		Resources: container.Resources{
			NanoCPUs:   d.nanoCPUs(spec.CPUs),
			Memory:     spec.MemoryBytes,
			CpusetCpus: spec.CPUSet,
		},
	}
	if spec.MemoryBytes > 0 {
		host.Resources.MemorySwap = spec.MemoryBytes // no swap
	}
	if d.init {
		host.Init = &d.init
	}
	_, err := d.c.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name: d.name(id),
		Config: &container.Config{
			Image:    spec.Image,
			Env:      env,
			Hostname: id,
			Labels:   d.labels(id, ""),
		},
		HostConfig: host,
		NetworkingConfig: &network.NetworkingConfig{
			EndpointsConfig: map[string]*network.EndpointSettings{d.networkID: {}},
		},
	})
	if cerrdefs.IsConflict(err) {
		return nil // exists: left as it is
	}
	if err != nil {
		return fmt.Errorf("docker: create container %s: %w", id, err)
	}
	return nil
}

// nanoCPUs is the CPU limit, clamped to the host's CPU count: the engine
// refuses a limit above it, and a 4- or 8-vCPU shape should still run (with
// every core) on a smaller host rather than fail to start.
func (d *Driver) nanoCPUs(cpus float64) int64 {
	if cpus <= 0 {
		return 0
	}
	if d.ncpu > 0 && cpus > float64(d.ncpu) {
		cpus = float64(d.ncpu)
	}
	return int64(cpus * 1e9)
}
