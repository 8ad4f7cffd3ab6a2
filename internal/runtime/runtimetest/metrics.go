package runtimetest

import (
	"testing"

	"github.com/svc-dev/svc/internal/runtime"
)

// testMetrics: counters are live. CPU time and percent rise after a busy
// loop, network bytes after traffic, the disk reads its real size.
func testMetrics(t *testing.T, s *suite) {
	in := s.running(t, s.spec())
	in.sh(t, "dd if=/dev/urandom of=/home/blob bs=1k count=2048 2>/dev/null")
	m1 := in.metrics(t)
	if m1.CPUSeconds <= 0 || m1.MemoryBytes <= 0 {
		t.Errorf("idle counters: %+v", m1)
	}
	if m1.MemoryLimitBytes != MemoryBytes {
		t.Errorf("memory limit %d, want %d", m1.MemoryLimitBytes, MemoryBytes)
	}
	if m1.DiskTotalBytes <= 0 || m1.DiskTotalBytes > DiskBytes || m1.DiskUsedBytes < 2<<20 {
		t.Errorf("disk used/total %d/%d, want at least the 2 MiB written of at most %d", m1.DiskUsedBytes, m1.DiskTotalBytes, DiskBytes)
	}

	in.sh(t, "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done")
	// Talk to the network's gateway (the host): the connection attempt
	// sends packets and the refusal comes back.
	in.sh(t, `gw=$(ip route | awk '/^default/ {print $3}'); nc -w 2 "$gw" 1 </dev/null || true`)
	m2 := in.metrics(t)
	if m2.CPUSeconds <= m1.CPUSeconds || m2.CPUPercent <= 0 {
		t.Errorf("after a busy loop: cpu %v s (was %v), %v%%", m2.CPUSeconds, m1.CPUSeconds, m2.CPUPercent)
	}
	if m2.NetTxBytes <= 0 || m2.NetRxBytes <= 0 {
		t.Errorf("after traffic: rx %d tx %d", m2.NetRxBytes, m2.NetTxBytes)
	}

	// A stopped instance still reports its disk.
	in.stop(t)
	m3 := in.metrics(t)
	if m3.DiskUsedBytes != m2.DiskUsedBytes || m3.DiskTotalBytes != m2.DiskTotalBytes {
		t.Errorf("stopped: disk %d/%d, was %d/%d", m3.DiskUsedBytes, m3.DiskTotalBytes, m2.DiskUsedBytes, m2.DiskTotalBytes)
	}
}

func (in *instance) metrics(t *testing.T) runtime.Metrics {
	t.Helper()
	m, err := in.d.Metrics(ctx(t), in.id)
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	return m
}
