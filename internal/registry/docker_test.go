package registry_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/registry"
)

// dockerClient connects to the local dockerd. Without one the test is
// skipped, unless SVC_TEST_DOCKER=1 says there must be one.
func dockerClient(t *testing.T) *client.Client {
	t.Helper()
	c, err := client.New(client.FromEnv, client.WithAPIVersionNegotiation())
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err = c.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true})
	}
	if err != nil {
		if os.Getenv("SVC_TEST_DOCKER") == "1" {
			t.Fatalf("SVC_TEST_DOCKER=1 but dockerd is not reachable: %v", err)
		}
		t.Skipf("no dockerd: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// The engine pulls an imported image from our registry by digest, with the
// internal credential and only with it; what it saves is importable again.
func TestEnginePullsImportedImage(t *testing.T) {
	docker := dockerClient(t)
	for _, mediaTypes := range []string{"docker", "oci"} {
		t.Run(mediaTypes, func(t *testing.T) {
			ctx := context.Background()
			img := smallImage(t, mediaTypes == "oci")
			src := newSource(t, "", "")
			ref := src.push(t, "small", "v1", img)
			reg := openRegistry(t, t.TempDir())
			serve(t, reg)

			repo := "ws/w/engine-" + mediaTypes
			got, err := reg.Import(ctx, ref, nil, repo, "v1")
			if err != nil {
				t.Fatal(err)
			}
			pullRef := reg.PullRef(repo, got.Digest)

			wrong := registry.Auth{Username: testUser, Password: "not-the-password"}
			err = enginePull(ctx, docker, pullRef, encodeAuth(t, wrong, reg.Addr()))
			if err == nil {
				docker.ImageRemove(ctx, pullRef, client.ImageRemoveOptions{Force: true})
				t.Fatal("the engine pulled with a wrong credential")
			}
			t.Logf("pull with a wrong credential: %v", err)
			if err := enginePull(ctx, docker, pullRef, encodeAuth(t, reg.PullAuth(), reg.Addr())); err != nil {
				t.Fatalf("engine pull of %s: %v", pullRef, err)
			}
			t.Cleanup(func() {
				if _, err := docker.ImageRemove(context.Background(), pullRef, client.ImageRemoveOptions{Force: true, PruneChildren: true}); err != nil {
					t.Errorf("remove %s: %v", pullRef, err)
				}
			})
			inspect, err := docker.ImageInspect(ctx, pullRef)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(inspect.RepoDigests, pullRef) {
				t.Fatalf("engine's RepoDigests %v lack %s", inspect.RepoDigests, pullRef)
			}
			if want := configName(t, img); inspect.ID != want {
				t.Fatalf("engine image id %s, want the config digest %s", inspect.ID, want)
			}

			// The engine's own `docker save` output imports back to the
			// same filesystem and config.
			saved, err := docker.ImageSave(ctx, []string{pullRef})
			if err != nil {
				t.Fatal(err)
			}
			back, err := reg.ImportArchive(ctx, saved, repo+"-saved", "")
			saved.Close()
			if err != nil {
				t.Fatal(err)
			}
			stored := pullBack(t, reg.Addr(), repo+"-saved", back.Digest)
			if configName(t, stored) != configName(t, img) || !slices.Equal(diffIDs(t, stored), diffIDs(t, img)) {
				t.Fatal("docker save round trip changed the image")
			}
		})
	}
}

func enginePull(ctx context.Context, docker *client.Client, ref, auth string) error {
	resp, err := docker.ImagePull(ctx, ref, client.ImagePullOptions{RegistryAuth: auth})
	if err != nil {
		return err
	}
	defer resp.Close()
	return resp.Wait(ctx)
}

// encodeAuth is the engine's X-Registry-Auth encoding of a credential.
func encodeAuth(t *testing.T, a registry.Auth, server string) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{"username": a.Username, "password": a.Password, "serveraddress": server})
	if err != nil {
		t.Fatal(err)
	}
	return base64.URLEncoding.EncodeToString(b)
}

// smallImage is a runnable linux/amd64 image: Debian's static busybox when
// installed (a tiny script otherwise) plus a random file, so each run's
// digest is new and the engine really pulls.
func smallImage(t *testing.T, oci bool) v1.Image {
	t.Helper()
	files := map[string][]byte{}
	if b, err := os.ReadFile("/bin/busybox"); err == nil {
		files["bin/busybox"] = b
	} else {
		files["bin/hello"] = []byte("#!/bin/sh\necho hello\n")
	}
	nonce := make([]byte, 16)
	rand.Read(nonce)
	files["etc/nonce"] = []byte(hex.EncodeToString(nonce))

	layerType := types.DockerLayer
	if oci {
		layerType = types.OCILayer
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(tarFiles(t, files))), nil
	}, tarball.WithMediaType(layerType))
	if err != nil {
		t.Fatal(err)
	}
	base := empty.Image
	if oci {
		base = mutate.MediaType(mutate.ConfigMediaType(base, types.OCIConfigJSON), types.OCIManifestSchema1)
	}
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, MediaType: layerType})
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config.Cmd = []string{"/bin/busybox", "true"}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// tarFiles is a layer tar of executable files, with fixed times.
func tarFiles(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	dirs := map[string]bool{}
	for _, n := range names {
		if d := n[:max(0, bytes.LastIndexByte([]byte(n), '/'))]; d != "" && !dirs[d] {
			dirs[d] = true
			tw.WriteHeader(&tar.Header{Name: d + "/", Mode: 0o755, Typeflag: tar.TypeDir, ModTime: time.Unix(0, 0)})
		}
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o755, Size: int64(len(files[n])), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}); err != nil {
			t.Fatal(err)
		}
		tw.Write(files[n])
	}
	tw.Close()
	return buf.Bytes()
}
