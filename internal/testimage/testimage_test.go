package testimage_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/svc-dev/svc/internal/testimage"
)

// TestBuildLayout reads the built image back and checks the tree and config
// without a daemon.
func TestBuildLayout(t *testing.T) {
	img := testimage.Build(t, testimage.Options{
		Files: []testimage.File{
			{Path: "/home/user/notes.txt", Content: []byte("hi"), Mode: 0o600, UID: 1000, GID: 1000},
			{Path: "/opt/app/data", Mode: fs.ModeDir | 0o750},
			{Path: "/opt/app/link", Mode: fs.ModeSymlink, Content: []byte("data")},
			{Path: "/root/.profile", Content: []byte("x")},
		},
		Env:        []string{"A=b"},
		Entrypoint: []string{"/bin/sh"},
		Cmd:        []string{"-c", "true"},
		WorkingDir: "/opt/app",
	})
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OS != "linux" || cfg.Architecture != "amd64" {
		t.Errorf("platform %s/%s", cfg.OS, cfg.Architecture)
	}
	if got := strings.Join(cfg.Config.Env, ","); !strings.Contains(got, "A=b") {
		t.Errorf("env %q", got)
	}
	if cfg.Config.WorkingDir != "/opt/app" || cfg.Config.Entrypoint[0] != "/bin/sh" || cfg.Config.Cmd[1] != "true" {
		t.Errorf("config %+v", cfg.Config)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 2 {
		t.Fatalf("layers %d %v", len(layers), err)
	}
	got := map[string]*tar.Header{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got[strings.TrimSuffix(h.Name, "/")] = h
		}
		rc.Close()
	}
	for name, want := range map[string]struct {
		typ  byte
		mode int64
		uid  int
	}{
		"bin/busybox":         {tar.TypeReg, 0o755, 0},
		"bin/sh":              {tar.TypeSymlink, 0o777, 0},
		"bin/httpd":           {tar.TypeSymlink, 0o777, 0},
		"root":                {tar.TypeDir, 0o700, 0},
		"tmp":                 {tar.TypeDir, 0o1777, 0},
		"home/user":           {tar.TypeDir, 0o755, 0},
		"home/user/notes.txt": {tar.TypeReg, 0o600, 1000},
		"opt/app/data":        {tar.TypeDir, 0o750, 0},
		"opt/app/link":        {tar.TypeSymlink, 0o777, 0},
	} {
		h := got[name]
		if h == nil {
			t.Errorf("%s missing", name)
			continue
		}
		if h.Typeflag != want.typ || h.Mode != want.mode || h.Uid != want.uid {
			t.Errorf("%s: type %c mode %o uid %d, want %c %o %d", name, h.Typeflag, h.Mode, h.Uid, want.typ, want.mode, want.uid)
		}
	}
	// The extra layer repeats parents it needs with the base layer's modes
	// (the map holds the last layer's entry).
	for name, mode := range map[string]int64{"home": 0o755, "root": 0o700, "opt": 0o755} {
		if h := got[name]; h == nil || h.Mode != mode {
			t.Errorf("%s: %+v, want mode %o", name, h, mode)
		}
	}
}

// TestPushPullRun pushes an image with a compiled Go program to the test
// registry, has dockerd pull it and runs it.
func TestPushPullRun(t *testing.T) {
	testimage.RequireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	reg := testimage.StartRegistry(t)
	img := testimage.Push(t, reg, "testimage/hello", testimage.Options{
		Files:      []testimage.File{{Path: "/etc/who", Content: []byte("a file")}},
		Programs:   []testimage.Program{{Package: "./testdata/hello", Path: "/usr/local/bin/hello"}},
		Env:        []string{"GREETING=hello"},
		Entrypoint: []string{"/usr/local/bin/hello"},
		Cmd:        []string{"/etc/who"},
	})
	if !strings.HasPrefix(img.Ref, reg+"/testimage/hello@sha256:") || !strings.HasSuffix(img.Ref, img.Digest) {
		t.Fatalf("ref %q digest %q", img.Ref, img.Digest)
	}

	c, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pull, err := c.ImagePull(ctx, img.Ref, client.ImagePullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := pull.Wait(ctx); err != nil {
		t.Fatalf("pull: %v", err)
	}
	t.Cleanup(func() { c.ImageRemove(context.Background(), img.Ref, client.ImageRemoveOptions{Force: true}) })
	created, err := c.ContainerCreate(ctx, client.ContainerCreateOptions{Image: img.Ref})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.ContainerRemove(context.Background(), created.ID, client.ContainerRemoveOptions{Force: true})
	})
	if _, err := c.ContainerStart(ctx, created.ID, client.ContainerStartOptions{}); err != nil {
		t.Fatal(err)
	}
	wait := c.ContainerWait(ctx, created.ID, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	select {
	case res := <-wait.Result:
		if res.StatusCode != 0 {
			t.Errorf("exit %d", res.StatusCode)
		}
	case err := <-wait.Error:
		t.Fatal(err)
	}
	logs, err := c.ContainerLogs(ctx, created.ID, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &out, logs); err != nil {
		t.Fatal(err)
	}
	if out.String() != "go says hello from a file" {
		t.Errorf("output %q", out.String())
	}
}
