package dashboard

import "syscall"

// Disk is the use of the filesystem holding a path.
type Disk struct {
	Label      string `json:"label"`
	Path       string `json:"path"`
	TotalBytes int64  `json:"total_bytes"`
	UsedBytes  int64  `json:"used_bytes"`
	// FreeBytes is what an unprivileged user can still write, as df's
	// "Avail" (the filesystem's reserve is neither used nor free).
	FreeBytes int64 `json:"free_bytes"`
}

// readDisks measures each path's filesystem once: the home is usually the
// instance disk and / the image's layer, but both may be one filesystem.
func readDisks(paths []Disk) []Disk {
	var out []Disk
	seen := map[[2]int64]bool{}
	for _, d := range paths {
		var st syscall.Statfs_t
		if err := syscall.Statfs(d.Path, &st); err != nil {
			continue
		}
		// Filesystem id plus size tells filesystems apart (overlay and
		// bind mounts can share an id).
		key := [2]int64{int64(st.Fsid.X__val[0])<<32 | int64(uint32(st.Fsid.X__val[1])), int64(st.Blocks)}
		if seen[key] {
			continue
		}
		seen[key] = true
		bs := int64(st.Bsize)
		d.TotalBytes = int64(st.Blocks) * bs
		d.UsedBytes = int64(st.Blocks-st.Bfree) * bs
		d.FreeBytes = int64(st.Bavail) * bs
		out = append(out, d)
	}
	return out
}
