package registry_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/svc-dev/svc/internal/fault"
)

func TestImportArchive(t *testing.T) {
	amd := randomImage(t, 3, "linux", "amd64")
	arm := randomImage(t, 1, "linux", "arm64")
	multi := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}},
		mutate.IndexAddendum{Add: amd, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
	)
	ociAmd := mutate.MediaType(amd, types.OCIManifestSchema1)

	cases := []struct {
		name    string
		archive []byte
		// sameDigest: the archive keeps the compressed layers, so the
		// stored manifest is the original one.
		sameDigest bool
	}{
		{"docker save, uncompressed layers", dockerSave(t, amd), false},
		{"ggcr tarball, compressed layers", ggcrTarball(t, amd), false},
		{"OCI layout with one image", ociLayout(t, func(p layout.Path) error { return p.AppendImage(ociAmd) }), true},
		{"OCI layout with a multi-platform index", ociLayout(t, func(p layout.Path) error { return p.AppendIndex(multi) }), true},
		{"OCI layout listing images directly", ociLayout(t, func(p layout.Path) error {
			if err := p.AppendImage(arm); err != nil {
				return err
			}
			return p.AppendImage(amd)
		}), true},
	}
	dir := t.TempDir()
	reg := openRegistry(t, dir)
	host := serve(t, reg)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			repo := fmt.Sprintf("ws/w/archive-%d", i)
			got, err := reg.ImportArchive(context.Background(), bytes.NewReader(c.archive), repo, "b1")
			if err != nil {
				t.Fatal(err)
			}
			stored := pullBack(t, host, repo, got.Digest)
			want := amd
			if c.name == "OCI layout with one image" {
				want = ociAmd
			}
			if c.sameDigest && got.Digest != digestOf(t, want) {
				t.Fatalf("digest %s, want the archived manifest's %s", got.Digest, digestOf(t, want))
			}
			if got.SizeBytes != storedSize(t, stored) {
				t.Fatalf("size %d, stored manifest says %d", got.SizeBytes, storedSize(t, stored))
			}
			// Whatever the packaging, the filesystem and config are the
			// original's.
			if a, b := configName(t, stored), configName(t, amd); a != b {
				t.Fatalf("config %s, want %s", a, b)
			}
			if a, b := diffIDs(t, stored), diffIDs(t, amd); !slices.Equal(a, b) {
				t.Fatalf("layers %v, want %v", a, b)
			}
			if d, err := reg.Resolve(context.Background(), repo, "b1"); err != nil || d != got.Digest {
				t.Fatalf("Resolve = %s, %v", d, err)
			}
		})
	}
	// Nothing is left behind in the registry's spool directory.
	var left []string
	filepath.WalkDir(filepath.Join(dir, "tmp"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Fatalf("spool files left: %v", left)
	}
}

func TestImportArchiveRejects(t *testing.T) {
	arm := randomImage(t, 1, "linux", "arm64")
	// A layout whose manifest claims a 9 GB layer that is not in the blobs.
	huge := ociLayout(t, func(p layout.Path) error {
		cfg := []byte(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}`)
		cfgHash, cfgSize, _ := v1.SHA256(bytes.NewReader(cfg))
		if err := p.WriteBlob(cfgHash, io.NopCloser(bytes.NewReader(cfg))); err != nil {
			return err
		}
		m, _ := json.Marshal(v1.Manifest{
			SchemaVersion: 2, MediaType: types.OCIManifestSchema1,
			Config: v1.Descriptor{MediaType: types.OCIConfigJSON, Size: cfgSize, Digest: cfgHash},
			Layers: []v1.Descriptor{{MediaType: types.OCILayer, Size: 9_000_000_000, Digest: v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("1", 64)}}},
		})
		mHash, mSize, _ := v1.SHA256(bytes.NewReader(m))
		if err := p.WriteBlob(mHash, io.NopCloser(bytes.NewReader(m))); err != nil {
			return err
		}
		return p.AppendDescriptor(v1.Descriptor{MediaType: types.OCIManifestSchema1, Size: mSize, Digest: mHash})
	})
	noImage := tarOf(t, map[string][]byte{"hello.txt": []byte("hi")})
	cases := []struct {
		name    string
		archive []byte
		code    fault.Code
		want    string
	}{
		{"docker save of an arm64 image", dockerSave(t, arm), fault.InvalidRequest, "linux/arm64"},
		{"OCI layout of an arm64 image", ociLayout(t, func(p layout.Path) error { return p.AppendImage(arm) }), fault.InvalidRequest, "linux/arm64"},
		{"over the size cap", huge, fault.ImageTooLarge, "8 GB"},
		{"not a tar", []byte("definitely not a tar archive, just some text that is long enough"), fault.InvalidRequest, "not a tar"},
		{"tar without an image", noImage, fault.InvalidRequest, "neither"},
		{"docker save naming missing files", tarOf(t, map[string][]byte{"manifest.json": []byte(`[{"Config":"c.json","Layers":["l.tar"]}]`)}), fault.InvalidRequest, "valid image"},
	}
	reg := openRegistry(t, t.TempDir())
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := reg.ImportArchive(context.Background(), bytes.NewReader(c.archive), "ws/w/bad", "b1")
			fe := wantFault(t, err, c.code)
			if !strings.Contains(fe.Message, c.want) {
				t.Fatalf("message %q, want %q", fe.Message, c.want)
			}
		})
	}
	if tags, _ := reg.Tags(context.Background(), "ws/w/bad"); len(tags) != 0 {
		t.Fatalf("a rejected archive was tagged: %v", tags)
	}
}

// Entry names that climb out of the layout are not written anywhere.
func TestImportArchiveEntryNames(t *testing.T) {
	amd := randomImage(t, 1, "linux", "amd64")
	good := ociLayout(t, func(p layout.Path) error { return p.AppendImage(amd) })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range []string{"../escape", "blobs/../../escape2", "/abs-escape"} {
		tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: 2, Typeflag: tar.TypeReg})
		tw.Write([]byte("x\n"))
	}
	copyTar(t, tw, good)
	tw.Close()

	root := t.TempDir()
	reg := openRegistry(t, filepath.Join(root, "a", "b", "registry"))
	got, err := reg.ImportArchive(context.Background(), &buf, "ws/w/names", "")
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest != digestOf(t, amd) {
		t.Fatalf("digest %s, want %s", got.Digest, digestOf(t, amd))
	}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), "escape") {
			t.Errorf("entry written to %s", p)
		}
		return nil
	})
}

func TestImportArchiveCancelled(t *testing.T) {
	archive := dockerSave(t, randomImage(t, 2, "linux", "amd64"))
	reg := openRegistry(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	// The reader cancels the request after the first chunk it hands over.
	rd := &cancelAfter{r: bytes.NewReader(archive), cancel: cancel}
	_, err := reg.ImportArchive(ctx, rd, "ws/w/cancel", "b1")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("ImportArchive = %v, want context.Canceled", err)
	}
}

type cancelAfter struct {
	r      io.Reader
	cancel func()
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p[:min(len(p), 512)])
	c.cancel()
	return n, err
}

// dockerSave writes img the way `docker save` did before Docker 25:
// manifest.json, the config, and one uncompressed layer.tar per layer.
func dockerSave(t *testing.T, img v1.Image) []byte {
	t.Helper()
	cfg, err := img.RawConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfgName, _ := img.ConfigName()
	files := map[string][]byte{cfgName.Hex + ".json": cfg}
	entry := map[string]any{"Config": cfgName.Hex + ".json", "RepoTags": []string{"example/app:latest"}}
	var layerNames []string
	layers, _ := img.Layers()
	for i, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		n := fmt.Sprintf("layer%d/layer.tar", i)
		files[n] = b
		layerNames = append(layerNames, n)
	}
	entry["Layers"] = layerNames
	m, _ := json.Marshal([]any{entry})
	files["manifest.json"] = m
	return tarOf(t, files)
}

// ggcrTarball writes img with ggcr's tarball package (gzipped layers).
func ggcrTarball(t *testing.T, img v1.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := tarball.Write(mustRef(t, "example/app:latest"), img, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ociLayout builds an OCI image layout with fill and returns it as a tar.
func ociLayout(t *testing.T, fill func(layout.Path) error) []byte {
	t.Helper()
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := fill(p); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.AddFS(os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	return buf.Bytes()
}

func tarOf(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(files[n])
	}
	tw.Close()
	return buf.Bytes()
}

// copyTar appends the entries of archive to tw.
func copyTar(t *testing.T, tw *tar.Writer, archive []byte) {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		tw.WriteHeader(h)
		io.Copy(tw, tr)
	}
}

func configName(t *testing.T, img v1.Image) string {
	t.Helper()
	h, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

func diffIDs(t *testing.T, img v1.Image) []string {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range cf.RootFS.DiffIDs {
		out = append(out, d.String())
	}
	return out
}
