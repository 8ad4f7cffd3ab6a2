package docker

import (
	"context"
	"math"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// Stop sends the stop signal, waits up to grace (rounded up to whole
// seconds, the engine's unit) and then kills. The disk stays mounted: it
// remains reserved, and the next start is quicker.
func (d *Driver) Stop(ctx context.Context, id string, grace time.Duration) error {
	if err := checkID(id); err != nil {
		return err
	}
	secs := max(0, int(math.Ceil(grace.Seconds())))
	_, err := d.c.ContainerStop(ctx, d.name(id), client.ContainerStopOptions{Timeout: &secs})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return errorf("stop %s: %w", id, err)
	}
	return nil
}
