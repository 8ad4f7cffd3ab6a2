package testimage

import (
	"archive/tar"
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// BusyboxPath is Debian's static busybox (package busybox-static).
const BusyboxPath = "/bin/busybox"

// baseDirs are the directories the busybox layer holds, with their modes
// (see layerOf).
var baseDirs = map[string]int64{
	"bin": 0o755, "etc": 0o755, "home": 0o755, "root": 0o700, "tmp": 0o1777,
	"usr": 0o755, "usr/bin": 0o755, "var": 0o755,
}

// busyboxLayer is built once per test process: reading and gzipping the
// binary is the slow part of every image.
var busyboxLayer = sync.OnceValues(func() (v1.Layer, error) {
	bin, err := os.ReadFile(BusyboxPath)
	if err != nil {
		return nil, fmt.Errorf("read busybox (install busybox-static): %w", err)
	}
	out, err := exec.Command(BusyboxPath, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("busybox --list: %w", err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, mode int64) {
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, ModTime: epoch})
	}
	file := func(name string, mode int64, body []byte) {
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(body)), ModTime: epoch})
		tw.Write(body)
	}
	link := func(name, target string) {
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777, ModTime: epoch})
	}
	for _, name := range slices.Sorted(maps.Keys(baseDirs)) {
		dir(name, baseDirs[name])
	}
	file("bin/busybox", 0o755, bin)
	for _, applet := range strings.Fields(string(out)) {
		if applet != "busybox" {
			link("bin/"+applet, "busybox")
		}
	}
	link("usr/bin/env", "/bin/busybox")
	file("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home/user:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"))
	file("etc/group", 0o644, []byte("root:x:0:\nuser:x:1000:\nnogroup:x:65534:\n"))
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return layerFromTar(buf.Bytes())
})
