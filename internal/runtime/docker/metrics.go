package docker

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/runtime/docker/disk"
	"golang.org/x/sys/unix"

	"github.com/svc-dev/svc/internal/runtime"
)

// Metrics takes one stats sample (the one-shot form: the engine's default
// samples twice, a second apart). CPU percent is measured against this
// driver's previous sample of the same container; the first sample
// averages over the container's run so far.
func (d *Driver) Metrics(ctx context.Context, id string) (runtime.Metrics, error) {
	if err := checkID(id); err != nil {
		return runtime.Metrics{}, err
	}
	res, err := d.c.ContainerStats(ctx, d.name(id), client.ContainerStatsOptions{})
	if err != nil {
		return runtime.Metrics{}, missing(err, "stats", id)
	}
	var s container.StatsResponse
	err = json.NewDecoder(res.Body).Decode(&s)
	res.Body.Close()
	if err != nil {
		return runtime.Metrics{}, errorf("stats %s: %w", id, err)
	}
	cpuNs := s.CPUStats.CPUUsage.TotalUsage
	m := runtime.Metrics{
		CPUSeconds:       float64(cpuNs) / 1e9,
		MemoryBytes:      int64(memoryUsed(s.MemoryStats)),
		MemoryLimitBytes: int64(s.MemoryStats.Limit),
	}
	for _, n := range s.Networks {
		m.NetRxBytes += int64(n.RxBytes)
		m.NetTxBytes += int64(n.TxBytes)
	}
	if cpuNs > 0 {
		m.CPUPercent = d.cpuPercent(ctx, id, s.ID, cpuNs, s.Read)
	}
	// Under the instance lock, so a Remove under way cannot have its disk
	// mounted again behind it.
	unlock := d.locks.lock(id)
	defer unlock()
	if err := d.mountIfPresent(id); err != nil {
		return runtime.Metrics{}, err
	}
	var fs unix.Statfs_t
	if ok, _ := disk.Mounted(d.mountPath(id)); ok && unix.Statfs(d.mountPath(id), &fs) == nil {
		m.DiskTotalBytes = int64(fs.Blocks) * fs.Bsize
		m.DiskUsedBytes = int64(fs.Blocks-fs.Bfree) * fs.Bsize
	}
	return m, nil
}

// memoryUsed is what the docker CLI shows: usage minus the inactive page
// cache the kernel can drop at no cost.
func memoryUsed(ms container.MemoryStats) uint64 {
	for _, key := range []string{"total_inactive_file", "inactive_file"} { // cgroup v1, v2
		if v, ok := ms.Stats[key]; ok && v < ms.Usage {
			return ms.Usage - v
		}
	}
	return ms.Usage
}

type cpuSample struct {
	containerID string
	cpuNs       uint64
	at          time.Time
}

type cpuSamples struct {
	mu   sync.Mutex
	last map[string]cpuSample
}

// cpuPercent is the CPU used between the previous sample and this one, in
// percent of one core. With no usable previous sample (first call, or the
// container was recreated) it averages since the container started.
func (d *Driver) cpuPercent(ctx context.Context, id, containerID string, cpuNs uint64, at time.Time) float64 {
	d.cpu.mu.Lock()
	prev, ok := d.cpu.last[id]
	if d.cpu.last == nil {
		d.cpu.last = map[string]cpuSample{}
	}
	d.cpu.last[id] = cpuSample{containerID, cpuNs, at}
	d.cpu.mu.Unlock()
	if ok && prev.containerID == containerID && at.After(prev.at) && cpuNs >= prev.cpuNs {
		return float64(cpuNs-prev.cpuNs) / float64(at.Sub(prev.at).Nanoseconds()) * 100
	}
	st, err := d.Inspect(ctx, id)
	if err != nil || st.StartedAt.IsZero() || !at.After(st.StartedAt) {
		return 0
	}
	return float64(cpuNs) / float64(at.Sub(st.StartedAt).Nanoseconds()) * 100
}
