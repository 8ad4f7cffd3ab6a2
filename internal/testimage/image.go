package testimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// File is one entry added on top of the busybox layer.
type File struct {
	// Path is absolute inside the image.
	Path    string
	Content []byte
	// Mode holds the permission bits, plus fs.ModeDir for a directory or
	// fs.ModeSymlink for a symlink whose target is Content. Zero permission
	// bits mean 0644 for files and 0755 for directories.
	Mode     fs.FileMode
	UID, GID int
	// Whiteout deletes Path as seen from lower layers (an OCI ".wh." entry);
	// only meaningful in Options.Layers.
	Whiteout bool
}

// Program is a Go package compiled for linux/amd64 with CGO_ENABLED=0 when
// the image is built.
type Program struct {
	// Package is what go build is given: an import path or a ./relative
	// directory, resolved from Dir.
	Package string
	// Dir is where go build runs; empty means the test's working directory
	// (its package directory).
	Dir string
	// Path is where the binary lands in the image (mode 0755).
	Path string
}

// Options describe an image: busybox, then Files and Programs in one layer,
// then one more layer per entry of Layers.
type Options struct {
	Files      []File
	Programs   []Program
	Layers     [][]File
	Env        []string // KEY=VALUE
	Entrypoint []string
	Cmd        []string
	WorkingDir string
	User       string
}

// epoch is the mtime of every generated entry, so equal options give equal
// digests across runs.
var epoch = time.Unix(1700000000, 0).UTC()

// Build assembles the image in memory; nothing touches a daemon.
func Build(t testing.TB, opts Options) v1.Image {
	t.Helper()
	img, err := BuildImage(opts)
	if err != nil {
		t.Fatalf("testimage: build: %v", err)
	}
	return img
}

// BuildImage is Build for callers without a testing.TB (the bench runner).
func BuildImage(opts Options) (v1.Image, error) {
	base, err := busyboxLayer()
	if err != nil {
		return nil, err
	}
	layers := []v1.Layer{base}
	files := append([]File(nil), opts.Files...)
	for _, p := range opts.Programs {
		bin, err := compile(p)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: p.Path, Content: bin, Mode: 0o755})
	}
	dirs := map[string]dirInfo{}
	for name, mode := range baseDirs {
		dirs[name] = dirInfo{mode: mode}
	}
	for i, group := range append([][]File{files}, opts.Layers...) {
		if len(group) == 0 && i == 0 {
			continue
		}
		l, err := layerOf(group, dirs)
		if err != nil {
			return nil, err
		}
		layers = append(layers, l)
	}
	cfg := &v1.ConfigFile{
		Architecture: "amd64",
		OS:           "linux",
		Created:      v1.Time{Time: epoch},
		Config: v1.Config{
			Env:        append([]string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"}, opts.Env...),
			Entrypoint: opts.Entrypoint,
			Cmd:        opts.Cmd,
			WorkingDir: opts.WorkingDir,
			User:       opts.User,
		},
	}
	img, err := mutate.ConfigFile(empty.Image, cfg)
	if err != nil {
		return nil, err
	}
	return mutate.AppendLayers(img, layers...)
}

// dirInfo is what a lower layer set for a directory.
type dirInfo struct {
	mode     int64
	uid, gid int
}

// layerOf writes files as one gzip layer. Parent directories the files do
// not list are written too, as lower layers left them (else root-owned
// 0755): an engine unpacking a layer makes missing parents 0755 in it,
// which would hide a lower layer's mode (/root 0700, /tmp 1777). dirs
// gains the directories this layer sets.
func layerOf(files []File, dirs map[string]dirInfo) (v1.Layer, error) {
	files = slices.Clone(files)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	given := map[string]bool{}
	for _, f := range files {
		p := clean(f.Path)
		given[p] = true
		if f.Mode&fs.ModeDir != 0 {
			mode := unixMode(f.Mode)
			if f.Mode.Perm() == 0 {
				mode |= 0o755
			}
			defer func() { dirs[p] = dirInfo{mode, f.UID, f.GID} }()
		}
	}
	added := map[string]bool{}
	sort.SliceStable(files, func(i, j int) bool { return clean(files[i].Path) < clean(files[j].Path) })
	for _, f := range files {
		p := clean(f.Path)
		if p == "" {
			return nil, fmt.Errorf("file path %q is the root", f.Path)
		}
		var parents []string // deepest first
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if !given[dir] && !added[dir] {
				added[dir] = true
				parents = append(parents, dir)
			}
		}
		for i := len(parents) - 1; i >= 0; i-- {
			info, ok := dirs[parents[i]]
			if !ok {
				info.mode = 0o755
			}
			h := &tar.Header{Typeflag: tar.TypeDir, Name: parents[i] + "/", Mode: info.mode, Uid: info.uid, Gid: info.gid, ModTime: epoch}
			if err := tw.WriteHeader(h); err != nil {
				return nil, err
			}
		}
		if err := writeEntry(tw, p, f); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return layerFromTar(buf.Bytes())
}

func writeEntry(tw *tar.Writer, p string, f File) error {
	h := &tar.Header{Name: p, Uid: f.UID, Gid: f.GID, ModTime: epoch, Mode: unixMode(f.Mode)}
	if f.Whiteout {
		h.Name, h.Typeflag, h.Mode = path.Join(path.Dir(p), ".wh."+path.Base(p)), tar.TypeReg, 0o600
		return tw.WriteHeader(h)
	}
	switch {
	case f.Mode&fs.ModeDir != 0:
		h.Typeflag, h.Name = tar.TypeDir, p+"/"
		if f.Mode.Perm() == 0 {
			h.Mode |= 0o755
		}
		return tw.WriteHeader(h)
	case f.Mode&fs.ModeSymlink != 0:
		h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, string(f.Content), 0o777
		return tw.WriteHeader(h)
	default:
		h.Typeflag, h.Size = tar.TypeReg, int64(len(f.Content))
		if f.Mode.Perm() == 0 {
			h.Mode |= 0o644
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(f.Content)
		return err
	}
}

// layerFromTar gzips at the fastest level: test layers are built often and
// pushed over loopback, so size hardly matters.
func layerFromTar(raw []byte) (v1.Layer, error) {
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	compressed := gz.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(compressed)), nil
	})
}

// unixMode turns Go's mode bits into the numeric ones tar stores.
func unixMode(m fs.FileMode) int64 {
	mode := int64(m.Perm())
	if m&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	return mode
}

func clean(p string) string {
	return strings.TrimPrefix(path.Clean("/"+p), "/")
}
