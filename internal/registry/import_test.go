package registry_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/svc-dev/svc/internal/fault"
	"github.com/svc-dev/svc/internal/registry"
)

func TestImportPlainImage(t *testing.T) {
	ctx := context.Background()
	src := newSource(t, "", "")
	img := randomImage(t, 3, "linux", "amd64")
	ref := src.push(t, "team/app", "v1", img)

	reg := openRegistry(t, t.TempDir())
	host := serve(t, reg)
	got, err := reg.Import(ctx, ref, nil, "ws/ws-1/app", "rev-1")
	if err != nil {
		t.Fatal(err)
	}
	want := registry.Image{Digest: digestOf(t, img), SizeBytes: storedSize(t, img)}
	if got != want {
		t.Fatalf("Import = %+v, want %+v", got, want)
	}
	stored := pullBack(t, host, "ws/ws-1/app", got.Digest)
	if d := digestOf(t, stored); d != got.Digest {
		t.Fatalf("stored digest %s, want %s", d, got.Digest)
	}
	if !reg.Exists(ctx, "ws/ws-1/app", got.Digest) {
		t.Fatal("Exists = false for the imported digest")
	}
	if reg.Exists(ctx, "ws/ws-2/app", got.Digest) {
		t.Fatal("Exists = true in another repository")
	}
	if d, err := reg.Resolve(ctx, "ws/ws-1/app", "rev-1"); err != nil || d != got.Digest {
		t.Fatalf("Resolve = %q, %v; want %s", d, err, got.Digest)
	}
	if _, err := reg.Resolve(ctx, "ws/ws-1/app", "rev-2"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("Resolve of an unknown tag: %v, want not_found", err)
	}
	if tags, err := reg.Tags(ctx, "ws/ws-1/app"); err != nil || !slices.Equal(tags, []string{"rev-1"}) {
		t.Fatalf("Tags = %v, %v", tags, err)
	}
	if tags, err := reg.Tags(ctx, "ws/nobody/app"); err != nil || len(tags) != 0 {
		t.Fatalf("Tags of an unknown repository = %v, %v", tags, err)
	}
	if want := host + "/ws/ws-1/app@" + got.Digest; reg.PullRef("ws/ws-1/app", got.Digest) != want {
		t.Fatalf("PullRef = %s, want %s", reg.PullRef("ws/ws-1/app", got.Digest), want)
	}
}

func TestImportAgainAndRetag(t *testing.T) {
	ctx := context.Background()
	src := newSource(t, "", "")
	ref := src.push(t, "app", "latest", randomImage(t, 2, "linux", "amd64"))
	reg := openRegistry(t, t.TempDir())

	first, err := reg.Import(ctx, ref, nil, "system/svc-general", "2026-11-21")
	if err != nil {
		t.Fatal(err)
	}
	again, err := reg.Import(ctx, ref, nil, "system/svc-general", "2026-11-28")
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Fatalf("second import = %+v, first %+v", again, first)
	}
	// No tag: stored by digest only.
	untagged, err := reg.Import(ctx, ref, nil, "system/svc-other", "")
	if err != nil || untagged != first {
		t.Fatalf("untagged import = %+v, %v", untagged, err)
	}
	tags, err := reg.Tags(ctx, "system/svc-general")
	if err != nil || !slices.Equal(tags, []string{"2026-11-21", "2026-11-28"}) {
		t.Fatalf("Tags = %v, %v", tags, err)
	}
	if tags, _ := reg.Tags(ctx, "system/svc-other"); len(tags) != 0 {
		t.Fatalf("untagged import left tags %v", tags)
	}
	if !reg.Exists(ctx, "system/svc-other", first.Digest) {
		t.Fatal("untagged import is not stored")
	}
}

func TestImportIndexPicksAmd64(t *testing.T) {
	src := newSource(t, "", "")
	arm := randomImage(t, 1, "linux", "arm64")
	amd := randomImage(t, 2, "linux", "amd64")
	idx := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}},
		mutate.IndexAddendum{Add: amd, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
	)
	ref := src.pushIndex(t, "multi", "v1", idx)

	reg := openRegistry(t, t.TempDir())
	host := serve(t, reg)
	got, err := reg.Import(context.Background(), ref, nil, "ws/w/multi", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := digestOf(t, amd); got.Digest != want {
		t.Fatalf("imported %s, want the amd64 image %s", got.Digest, want)
	}
	if got.SizeBytes != storedSize(t, amd) {
		t.Fatalf("size %d, want %d", got.SizeBytes, storedSize(t, amd))
	}
	pullBack(t, host, "ws/w/multi", got.Digest)
	if reg.Exists(context.Background(), "ws/w/multi", digestOf(t, arm)) {
		t.Fatal("the arm64 image was copied too")
	}
}

func TestImportRejectsOtherPlatforms(t *testing.T) {
	src := newSource(t, "", "")
	armOnly := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: randomImage(t, 1, "linux", "arm64"), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}},
		mutate.IndexAddendum{Add: randomImage(t, 1, "linux", "arm"), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm", Variant: "v7"}}},
	)
	// The index claims amd64; the image's own config says arm64.
	lying := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: randomImage(t, 1, "linux", "arm64"), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
	)
	cases := []struct {
		name, ref, wantMsg string
	}{
		{"arm64-only index", src.pushIndex(t, "arm", "v1", armOnly), "linux/arm, linux/arm64"},
		{"single manifest with an arm64 config", src.push(t, "armcfg", "v1", randomImage(t, 1, "linux", "arm64")), "linux/arm64"},
		{"windows image", src.push(t, "win", "v1", randomImage(t, 1, "windows", "amd64")), "windows/amd64"},
		{"config without a platform", src.push(t, "bare", "v1", randomImage(t, 1, "", "")), "(unset)"},
		{"index entry whose config disagrees", src.pushIndex(t, "lying", "v1", lying), "linux/arm64"},
	}
	reg := openRegistry(t, t.TempDir())
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := reg.Import(context.Background(), c.ref, nil, "ws/w/x", "t")
			fe := wantFault(t, err, fault.InvalidRequest)
			if !strings.Contains(fe.Message, "linux/amd64") || !strings.Contains(fe.Message, c.wantMsg) {
				t.Fatalf("message %q should name linux/amd64 and %q", fe.Message, c.wantMsg)
			}
		})
	}
	if tags, _ := reg.Tags(context.Background(), "ws/w/x"); len(tags) != 0 {
		t.Fatalf("a rejected image was tagged: %v", tags)
	}
}

// A manifest that claims more than 8 GB is refused from the manifest alone:
// the source serves the manifest but holds none of its blobs, and sees no
// blob request at all.
func TestImportTooLarge(t *testing.T) {
	src := newSource(t, "", "")
	config := []byte(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}`)
	fake := func(i int) v1.Hash {
		return v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("0", 63) + string(rune('a'+i))}
	}
	manifestWithConfig := func(cfgSize int64, layerSizes ...int64) []byte {
		cfgHash, _, _ := v1.SHA256(strings.NewReader(string(config)))
		m := v1.Manifest{
			SchemaVersion: 2,
			MediaType:     types.DockerManifestSchema2,
			Config:        v1.Descriptor{MediaType: types.DockerConfigJSON, Size: cfgSize, Digest: cfgHash},
		}
		for i, n := range layerSizes {
			m.Layers = append(m.Layers, v1.Descriptor{MediaType: types.DockerLayer, Size: n, Digest: fake(i)})
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cfgSize := int64(len(config))
	manifest := func(layerSizes ...int64) []byte { return manifestWithConfig(cfgSize, layerSizes...) }
	reg := openRegistry(t, t.TempDir())
	for _, c := range []struct {
		name     string
		manifest []byte
	}{
		{"one huge layer", manifest(8_000_000_001)},
		{"layers summing past the cap", manifest(4_000_000_000, 4_000_000_000-cfgSize+1)},
		{"layer near int64 max", manifest(1, 1<<63-1)},
		{"huge config", manifestWithConfig(1<<62, 1<<62)},
	} {
		t.Run(c.name, func(t *testing.T) {
			ref := src.putManifest(t, "big", "v1", string(types.DockerManifestSchema2), c.manifest)
			before := src.blobReqs.Load()
			_, err := reg.Import(context.Background(), ref, nil, "ws/w/big", "t")
			wantFault(t, err, fault.ImageTooLarge)
			if n := src.blobReqs.Load() - before; n != 0 {
				t.Fatalf("the source saw %d blob requests before the size check", n)
			}
		})
	}
	// Exactly at the cap is allowed: the import goes on to the blobs, and
	// fails on the missing layer instead.
	src.putBlob(t, "big", config)
	ref := src.putManifest(t, "big", "v1", string(types.DockerManifestSchema2), manifest(8_000_000_000-cfgSize))
	_, err := reg.Import(context.Background(), ref, nil, "ws/w/big", "t")
	fe := wantFault(t, err, fault.InvalidRequest)
	if !strings.Contains(fe.Message, "not found") {
		t.Fatalf("at the cap: %q, want the missing layer reported", fe.Message)
	}
}

func TestImportUnpullable(t *testing.T) {
	src := newSource(t, "", "")
	img := randomImage(t, 1, "linux", "amd64")
	src.push(t, "known", "v1", img)
	reg := openRegistry(t, t.TempDir())
	for _, c := range []struct{ name, ref, want string }{
		{"unknown repository", src.host + "/nobody/here:v1", "not found"},
		{"unknown tag", src.host + "/known:v2", "not found"},
		{"unknown digest", src.host + "/known@sha256:" + strings.Repeat("ab", 32), "not found"},
		{"unreachable registry", closedPort(t) + "/known:v1", "cannot be reached"},
		{"empty", "", "not a valid image reference"},
		{"upper case repository", src.host + "/Known:v1", "not a valid image reference"},
		{"bad tag", src.host + "/known:v 1", "not a valid image reference"},
		{"short digest", src.host + "/known@sha256:abc", "not a valid image reference"},
		{"scheme", "http://" + src.host + "/known:v1", "not a valid image reference"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := reg.Import(context.Background(), c.ref, nil, "ws/w/app", "t")
			fe := wantFault(t, err, fault.InvalidRequest)
			if !strings.Contains(fe.Message, c.want) {
				t.Fatalf("message %q, want it to say %q", fe.Message, c.want)
			}
		})
	}
}

func TestImportRegistryAuth(t *testing.T) {
	const user, pass = "robot", "s3cret-pa55word"
	src := newSource(t, user, pass)
	img := randomImage(t, 2, "linux", "amd64")
	ref := src.push(t, "private/app", "v1", img)
	reg := openRegistry(t, t.TempDir())

	got, err := reg.Import(context.Background(), ref, &registry.Auth{Username: user, Password: pass}, "ws/w/private", "t")
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest != digestOf(t, img) {
		t.Fatalf("digest %s, want %s", got.Digest, digestOf(t, img))
	}
	for _, c := range []struct {
		name string
		auth *registry.Auth
	}{
		{"missing", nil},
		{"wrong password", &registry.Auth{Username: user, Password: "wrong-" + pass}},
		{"wrong user", &registry.Auth{Username: "someone", Password: pass}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := reg.Import(context.Background(), ref, c.auth, "ws/w/private2", "t")
			fe := wantFault(t, err, fault.InvalidRequest)
			if !strings.Contains(fe.Message, "registry_auth") {
				t.Fatalf("message %q should point at registry_auth", fe.Message)
			}
			// The source echoed the credential back; neither the message
			// nor the logged cause may carry it.
			if c.auth != nil {
				basic := base64.StdEncoding.EncodeToString([]byte(c.auth.Username + ":" + c.auth.Password))
				if strings.Contains(err.Error(), c.auth.Password) || strings.Contains(err.Error(), basic) {
					t.Fatalf("error carries the credential: %v", err)
				}
			}
			if fe.Cause == nil {
				t.Fatal("no cause kept for the log")
			}
		})
	}
}

// Cancelling the request stops a copy that is under way.
func TestImportCancelled(t *testing.T) {
	src := newSource(t, "", "")
	img := randomImage(t, 2, "linux", "amd64")
	ref := src.push(t, "slow", "v1", img)
	src.stall = make(chan struct{})
	reg := openRegistry(t, t.TempDir())

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-src.stall
		cancel()
	}()
	_, err := reg.Import(ctx, ref, nil, "ws/w/slow", "t")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Import = %v, want context.Canceled", err)
	}
	if _, ok := fault.As(err); ok {
		t.Fatalf("a cancelled import is not the client's fault: %v", err)
	}
	if reg.Exists(context.Background(), "ws/w/slow", digestOf(t, img)) {
		t.Fatal("a cancelled import stored the image")
	}
}

// A source that breaks off or sends corrupt blobs mid-copy makes the image
// unpullable, and nothing is stored.
func TestImportSourceFailsMidCopy(t *testing.T) {
	for _, c := range []struct {
		name    string
		prepare func(*source)
	}{
		{"breaks off", func(s *source) { s.breakOff = true }},
		{"corrupt", func(s *source) { s.corrupt = true }},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := newSource(t, "", "")
			img := randomImage(t, 2, "linux", "amd64")
			ref := src.push(t, "flaky", "v1", img)
			c.prepare(src)
			reg := openRegistry(t, t.TempDir())
			_, err := reg.Import(context.Background(), ref, nil, "ws/w/flaky", "t")
			fe := wantFault(t, err, fault.InvalidRequest)
			if !strings.Contains(fe.Message, "stopped sending or sent corrupt data") {
				t.Fatalf("message %q, want the broken copy named (cause: %v)", fe.Message, fe.Cause)
			}
			if reg.Exists(context.Background(), "ws/w/flaky", digestOf(t, img)) {
				t.Fatal("a failed import stored the image")
			}
		})
	}
}

func TestImportRejectsBadDestination(t *testing.T) {
	src := newSource(t, "", "")
	ref := src.push(t, "app", "v1", randomImage(t, 1, "linux", "amd64"))
	reg := openRegistry(t, t.TempDir())
	for _, c := range []struct{ repo, tag string }{
		{"", ""}, {"WS/a", ""}, {"ws//a", ""}, {"ws/a/", ""}, {"ws/-a", ""}, {"ws/a..b", ""},
		{strings.Repeat("a", 201), ""}, {"ws/a", "bad tag"}, {"ws/a", ".dot"}, {"ws/a", strings.Repeat("t", 129)},
	} {
		if _, err := reg.Import(context.Background(), ref, nil, c.repo, c.tag); err == nil {
			t.Errorf("Import into %q:%q succeeded", c.repo, c.tag)
		}
	}
	for _, repo := range []string{"ws/ws-0a1b/my-app", "system/svc-general", "a", "a.b_c__d/e-f--g"} {
		if err := registry.ValidRepo(repo); err != nil {
			t.Errorf("ValidRepo(%q) = %v", repo, err)
		}
	}
}
