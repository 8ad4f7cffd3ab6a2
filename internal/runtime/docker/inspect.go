package docker

import (
	"context"
	"net/netip"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/runtime"
)

// Inspect observes the container. While the engine waits to restart a
// crashed main process (restart policy unless-stopped) the state reads
// Restarting, with the exit code of the last run and the restart count.
func (d *Driver) Inspect(ctx context.Context, id string) (runtime.Status, error) {
	if err := checkID(id); err != nil {
		return runtime.Status{}, err
	}
	res, err := d.c.ContainerInspect(ctx, d.name(id), client.ContainerInspectOptions{})
	if cerrdefs.IsNotFound(err) {
		return runtime.Status{State: runtime.Missing}, nil
	}
	if err != nil {
		return runtime.Status{}, errorf("inspect %s: %w", id, err)
	}
	c := res.Container
	st := runtime.Status{RestartCount: c.RestartCount}
	if c.State == nil {
		return runtime.Status{}, errorf("inspect %s: no state", id)
	}
	st.State = stateOf(c.State.Status)
	st.ExitCode = c.State.ExitCode
	st.StartedAt = parseTime(c.State.StartedAt)
	st.FinishedAt = parseTime(c.State.FinishedAt)
	if st.State == runtime.Running {
		st.Addr = d.addr(c.NetworkSettings)
	}
	return st, nil
}

func stateOf(s container.ContainerState) runtime.State {
	switch s {
	case container.StateCreated:
		return runtime.Created
	case container.StateRunning, container.StatePaused:
		return runtime.Running
	case container.StateRestarting:
		return runtime.Restarting
	default: // exited, dead, removing
		return runtime.Exited
	}
}

// addr is the container's address on the instance network.
func (d *Driver) addr(ns *container.NetworkSettings) netip.Addr {
	if ns == nil {
		return netip.Addr{}
	}
	for name, ep := range ns.Networks {
		if ep != nil && (ep.NetworkID == d.networkID || name == d.cfg.Network) {
			return ep.IPAddress
		}
	}
	return netip.Addr{}
}

// parseTime reads the engine's RFC 3339 times; its zero time
// (0001-01-01T00:00:00Z) reads as the zero time.Time.
func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Year() <= 1 {
		return time.Time{}
	}
	return t
}
