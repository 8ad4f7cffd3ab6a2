package runtimetest

import (
	"strconv"
	"strings"
	"testing"
)

// testEnv: spec env and the image's own env both reach the main process
// and exec'd commands.
func testEnv(t *testing.T, s *suite) {
	spec := s.spec()
	spec.Env["SVC_TEST_MARK"] = "x y=z"
	in := s.running(t, spec)
	if got := in.sh(t, `printf '%s|%s' "$SVC_TEST_MARK" "$IMAGE_ENV"`); got != "x y=z|from-image" {
		t.Errorf("exec env: %q", got)
	}
	// The main process printed it at boot.
	waitLog(t, in, "boot mark=x y=z")
}

// testLimits reads the container's cgroup files (v1 or v2) and affinity.
func testLimits(t *testing.T, s *suite) {
	spec := s.spec()
	spec.CPUs = 0.5
	spec.CPUSet = "0"
	in := s.running(t, spec)
	v2 := in.sh(t, `[ -f /sys/fs/cgroup/cgroup.controllers ] && echo 2 || echo 1`) == "2\n"
	var quota, period float64
	var mem, swap string
	if v2 {
		f := strings.Fields(in.sh(t, "cat /sys/fs/cgroup/cpu.max"))
		quota, period = num(t, f[0]), num(t, f[1])
		mem = in.sh(t, "cat /sys/fs/cgroup/memory.max")
		swap = in.sh(t, "cat /sys/fs/cgroup/memory.swap.max 2>/dev/null || true")
	} else {
		quota = num(t, in.sh(t, "cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us"))
		period = num(t, in.sh(t, "cat /sys/fs/cgroup/cpu/cpu.cfs_period_us"))
		mem = in.sh(t, "cat /sys/fs/cgroup/memory/memory.limit_in_bytes")
		// memsw exists only with swap accounting; its limit then equals
		// memory's (no swap).
		if sw := in.sh(t, "cat /sys/fs/cgroup/memory/memory.memsw.limit_in_bytes 2>/dev/null || true"); sw != "" {
			swap = strconv.FormatInt(int64(num(t, sw))-MemoryBytes, 10)
		}
	}
	if got := quota / period; got != 0.5 {
		t.Errorf("cpu quota/period = %v/%v = %v, want 0.5", quota, period, got)
	}
	if got := int64(num(t, mem)); got != MemoryBytes {
		t.Errorf("memory limit %d, want %d", got, MemoryBytes)
	}
	if s := strings.TrimSpace(swap); s != "" && s != "0" {
		t.Errorf("swap allowed: %q", s)
	}
	if got := strings.TrimSpace(in.sh(t, "nproc")); got != "1" {
		t.Errorf("nproc with cpuset 0 = %s, want 1", got)
	}
}

// testDisk: /home and /root are one filesystem of DiskBytes, writing past
// it fails with ENOSPC, and data (disk and OS layer) survives stop/start.
func testDisk(t *testing.T, s *suite) {
	in := s.running(t, s.spec())
	devs := strings.Fields(in.sh(t, "stat -c %d / /home /root"))
	if devs[1] != devs[2] || devs[0] == devs[1] {
		t.Errorf("devices of / /home /root: %v; want /home and /root on one separate disk", devs)
	}
	total := int64(num(t, strings.Fields(in.sh(t, "df -k /home | tail -1"))[1])) << 10
	if total > DiskBytes || total < DiskBytes*3/4 {
		t.Errorf("disk total %d, want about %d", total, DiskBytes)
	}
	res := in.exec(t, execSh("dd if=/dev/zero of=/home/fill bs=1M count=96"))
	if res.ExitCode == 0 || !strings.Contains(string(res.Stderr), "No space left on device") {
		t.Errorf("writing 96 MiB into a 64 MiB disk: exit %d, stderr %s", res.ExitCode, res.Stderr)
	}
	in.sh(t, "rm /home/fill && echo kept > /home/persist && echo root > /root/persist && echo os > /etc/oslayer")

	in.stop(t)
	in.start(t)
	if got := in.sh(t, "cat /home/persist /root/persist /etc/oslayer"); got != "kept\nroot\nos\n" {
		t.Errorf("after stop/start: %q", got)
	}
}

// testSeed: files the image ships in /home and /root are on the disk with
// their owners and modes.
func testSeed(t *testing.T, s *suite) {
	in := s.running(t, s.spec())
	if got := in.sh(t, "cat "+seedFile); got != seedContent {
		t.Errorf("%s = %q", seedFile, got)
	}
	for _, c := range []struct{ path, want string }{
		{"/home/svc", "750 1000:1000"},
		{seedFile, "640 1000:1000"},
		{"/root", "700 0:0"},
		{rootFile, "600 0:0"},
	} {
		if got := strings.TrimSpace(in.sh(t, "stat -c '%a %u:%g' "+c.path)); got != c.want {
			t.Errorf("%s: %s, want %s", c.path, got, c.want)
		}
	}
	if got := in.sh(t, "readlink /home/svc/link"); got != "seed.txt\n" {
		t.Errorf("symlink: %q", got)
	}
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return f
}
