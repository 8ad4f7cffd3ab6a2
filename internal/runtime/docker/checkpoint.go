package docker

import (
	"context"
	"errors"
	"os/exec"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/runtime"
)

var _ runtime.Checkpointer = (*Driver)(nil)

// checkpointName is the one checkpoint an instance keeps while asleep.
const checkpointName = "svc-sleep"

// checkpointSupport finds out once, at New, whether this host can
// checkpoint: the engine must run with experimental features on (docker
// checkpoint is experimental) and criu must pass its own kernel check.
func (d *Driver) checkpointSupport(ctx context.Context, experimental bool) error {
	var why []string
	if !experimental {
		why = append(why, "dockerd runs without --experimental, which docker checkpoint needs")
	}
	if criu, err := exec.LookPath("criu"); err != nil {
		why = append(why, "criu is not installed")
	} else if out, err := exec.CommandContext(ctx, criu, "check").CombinedOutput(); err != nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		why = append(why, "criu check fails on this kernel ("+lines[len(lines)-1]+")")
	}
	if len(why) > 0 {
		return errors.New(strings.Join(why, "; "))
	}
	return nil
}

// CheckpointSupport says whether sleep can checkpoint on this host.
func (d *Driver) CheckpointSupport() error { return d.cpErr }

// Checkpoint freezes the container to disk and stops it.
func (d *Driver) Checkpoint(ctx context.Context, id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	if d.cpErr != nil {
		return d.cpErr
	}
	d.Discard(ctx, id) // a stale checkpoint of an earlier sleep
	_, err := d.c.CheckpointCreate(ctx, d.name(id), client.CheckpointCreateOptions{CheckpointID: checkpointName, Exit: true})
	if err != nil {
		return missing(err, "checkpoint", id)
	}
	return nil
}

// Restore starts the container from its checkpoint.
func (d *Driver) Restore(ctx context.Context, id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	if d.cpErr != nil {
		return d.cpErr
	}
	unlock := d.locks.lock(id)
	defer unlock()
	if err := d.mountIfPresent(id); err != nil {
		return err
	}
	_, err := d.c.ContainerStart(ctx, d.name(id), client.ContainerStartOptions{CheckpointID: checkpointName})
	if err != nil {
		return missing(err, "restore", id)
	}
	return nil
}

// Discard removes the sleep checkpoint; a missing one is not an error.
func (d *Driver) Discard(ctx context.Context, id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	if d.cpErr != nil {
		return nil
	}
	_, err := d.c.CheckpointRemove(ctx, d.name(id), client.CheckpointRemoveOptions{CheckpointID: checkpointName})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return errorf("discard checkpoint of %s: %w", id, err)
	}
	return nil
}
