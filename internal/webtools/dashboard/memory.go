package dashboard

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Memory is the instance's memory use as its container sees it.
type Memory struct {
	UsedBytes  int64 `json:"used_bytes"`
	LimitBytes int64 `json:"limit_bytes"`
	// Source says where the figures come from: "cgroup v2", "cgroup v1"
	// or "meminfo" (no memory cgroup visible: the whole machine).
	Source string `json:"source"`
}

// unlimited is past any real limit; cgroup v1 reports "no limit" as a
// number near 2^63.
const unlimited = int64(1) << 62

// readMemory reads the container's memory cgroup under root ("/" in
// production), as docker stats does: usage without the inactive page
// cache, which the kernel reclaims before it would kill anything. The
// limit is the cgroup's, or the machine's memory when there is none.
func readMemory(root string) (Memory, error) {
	cg := filepath.Join(root, "sys/fs/cgroup")
	// cgroup v2: the namespace root is the container's own cgroup; without
	// a cgroup namespace, our own cgroup's directory.
	dirs := []string{cg}
	if p := ownCgroupV2(root); p != "" && p != "/" {
		dirs = append(dirs, filepath.Join(cg, p))
	}
	for _, dir := range dirs {
		cur, err := readInt(filepath.Join(dir, "memory.current"))
		if err != nil {
			continue
		}
		limit, _ := readInt(filepath.Join(dir, "memory.max")) // "max": unlimited, read as 0
		inactive := statValue(filepath.Join(dir, "memory.stat"), "inactive_file")
		return finish(root, Memory{UsedBytes: cur - inactive, LimitBytes: limit, Source: "cgroup v2"})
	}
	// cgroup v1: the engine mounts the container's own memory cgroup at
	// memory/.
	v1 := filepath.Join(cg, "memory")
	if usage, err := readInt(filepath.Join(v1, "memory.usage_in_bytes")); err == nil {
		limit, _ := readInt(filepath.Join(v1, "memory.limit_in_bytes"))
		inactive := statValue(filepath.Join(v1, "memory.stat"), "total_inactive_file")
		return finish(root, Memory{UsedBytes: usage - inactive, LimitBytes: limit, Source: "cgroup v1"})
	}
	total, available := meminfo(root)
	if total == 0 {
		return Memory{}, errors.New("no memory cgroup and no /proc/meminfo")
	}
	return Memory{UsedBytes: total - available, LimitBytes: total, Source: "meminfo"}, nil
}

// finish replaces a missing or unlimited limit with the machine's memory
// and keeps used within [0, limit].
func finish(root string, m Memory) (Memory, error) {
	if m.LimitBytes <= 0 || m.LimitBytes >= unlimited {
		m.LimitBytes, _ = meminfo(root)
	}
	m.UsedBytes = max(m.UsedBytes, 0)
	if m.LimitBytes > 0 {
		m.UsedBytes = min(m.UsedBytes, m.LimitBytes)
	}
	return m, nil
}

// ownCgroupV2 is the path of the unified ("0::") line of
// /proc/self/cgroup.
func ownCgroupV2(root string) string {
	b, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p
		}
	}
	return ""
}

// meminfo returns MemTotal and MemAvailable in bytes.
func meminfo(root string) (total, available int64) {
	f, err := os.Open(filepath.Join(root, "proc/meminfo"))
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "MemTotal:":
			total = kb << 10
		case "MemAvailable:":
			available = kb << 10
		}
	}
	return total, available
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

// statValue is one "key value" line of a memory.stat file; 0 if absent.
func statValue(path, key string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}
