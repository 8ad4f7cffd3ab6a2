package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/svc-dev/svc/internal/svctest"
	"github.com/svc-dev/svc/internal/testimage"
	"github.com/svc-dev/svc/sdk"
)

func TestSystemCatalog(t *testing.T) {
	env := svctest.New(t, svctest.Options{})
	list, err := env.Client.Templates(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"svc-general", "svc-general-small", "svc-general-alt", "svc-coding-a", "svc-coding-b", "svc-coding-c", "svc-coding-d", "svc-workflow"}
	if len(list) != len(want) {
		t.Fatalf("%d templates", len(list))
	}
	for i, tpl := range list {
		port := 3737
		if tpl.Name == "svc-workflow" {
			port = 5678
		}
		if tpl.Name != want[i] || tpl.Scope != "system" || tpl.DefaultPort != port || tpl.Description == "" || tpl.Revision != nil {
			t.Fatalf("entry %d: %+v", i, tpl)
		}
	}
	got, err := env.Client.Template(context.Background(), "svc-general")
	if err != nil || got.Name != "svc-general" {
		t.Fatalf("get system: %v %+v", err, got)
	}
	_, err = env.Client.Template(context.Background(), "svc-general@2001-01-01")
	wantCode(t, err, 404, "not_found")
	wantCode(t, env.Client.DeleteTemplate(context.Background(), "svc-general"), 400, "invalid_request")
}

func TestWorkspaceTemplates(t *testing.T) {
	env := svctest.New(t, svctest.Options{})
	ctx := context.Background()
	v1 := env.Push("test/web", svctest.HTTPServer(8000))
	v2 := env.Push("test/web2", svctest.Sleeper())
	port := 8000

	for _, c := range []struct {
		req  sdk.CreateTemplate
		code string
	}{
		{sdk.CreateTemplate{Name: "a", ImageRef: v1.Ref}, "invalid_request"},                     // too short
		{sdk.CreateTemplate{Name: "Web", ImageRef: v1.Ref}, "invalid_request"},                   // uppercase
		{sdk.CreateTemplate{Name: "1web", ImageRef: v1.Ref}, "invalid_request"},                  // leading digit
		{sdk.CreateTemplate{Name: "svc-mine", ImageRef: v1.Ref}, "invalid_request"},              // reserved prefix
		{sdk.CreateTemplate{Name: strings.Repeat("a", 64), ImageRef: v1.Ref}, "invalid_request"}, // too long
		{sdk.CreateTemplate{Name: "web", ImageRef: "busybox"}, "invalid_request"},                // not qualified
		{sdk.CreateTemplate{Name: "web", ImageRef: env.Source + "/" + strings.Repeat("x", 255)}, "invalid_request"},
		{sdk.CreateTemplate{Name: "web", ImageRef: env.Source + "/nope/missing:1"}, "invalid_request"}, // unpullable
		{sdk.CreateTemplate{Name: "web", ImageRef: v1.Ref, DefaultPort: ptr(8080)}, "invalid_request"}, // reserved port
		{sdk.CreateTemplate{Name: "web", ImageRef: v1.Ref, DefaultPort: ptr(22022)}, "invalid_request"},
		{sdk.CreateTemplate{Name: "web", ImageRef: v1.Ref, DefaultPort: ptr(70000)}, "invalid_request"},
	} {
		_, err := env.Client.CreateTemplate(ctx, c.req)
		wantCode(t, err, 400, c.code)
	}

	// An image that is not linux/amd64 (by its config) is refused.
	arm := testimage.Build(t, svctest.Sleeper())
	cf, _ := arm.ConfigFile()
	cf.Architecture = "arm64"
	arm, _ = mutate.ConfigFile(arm, cf)
	armRef, _ := name.NewTag(env.Source+"/test/arm:1", name.Insecure)
	if err := remote.Write(armRef, arm); err != nil {
		t.Fatal(err)
	}
	_, err := env.Client.CreateTemplate(ctx, sdk.CreateTemplate{Name: "arm", ImageRef: armRef.String()})
	wantCode(t, err, 400, "invalid_request")

	tpl, err := env.Client.CreateTemplate(ctx, sdk.CreateTemplate{Name: "web", ImageRef: v1.Ref, DefaultPort: &port, Description: "site"})
	if err != nil {
		t.Fatal(err)
	}
	if tpl.Scope != "workspace" || *tpl.Revision != 1 || *tpl.ImageDigest != v1.Digest || *tpl.ImageRef != v1.Ref || tpl.DefaultPort != 8000 {
		t.Fatalf("created %+v", tpl)
	}
	_, err = env.Client.CreateTemplate(ctx, sdk.CreateTemplate{Name: "web", ImageRef: v1.Ref})
	wantCode(t, err, 409, "template_conflict")

	// A new image publishes revision 2; a description alone does not.
	ref2 := v2.Ref
	tpl, err = env.Client.UpdateTemplate(ctx, "web", sdk.UpdateTemplate{ImageRef: &ref2})
	if err != nil || *tpl.Revision != 2 || *tpl.ImageDigest != v2.Digest {
		t.Fatalf("update image: %v %+v", err, tpl)
	}
	desc := "new words"
	tpl, err = env.Client.UpdateTemplate(ctx, "web", sdk.UpdateTemplate{Description: &desc})
	if err != nil || *tpl.Revision != 2 || tpl.Description != desc {
		t.Fatalf("update description: %v %+v", err, tpl)
	}
	_, err = env.Client.UpdateTemplate(ctx, "web", sdk.UpdateTemplate{})
	wantCode(t, err, 400, "invalid_request")
	_, err = env.Client.UpdateTemplate(ctx, "nope", sdk.UpdateTemplate{Description: &desc})
	wantCode(t, err, 404, "not_found")

	got, err := env.Client.Template(ctx, "web")
	if err != nil || len(got.Revisions) != 2 || got.Revisions[0].Revision != 2 || got.Revisions[1].ImageDigest != v1.Digest {
		t.Fatalf("get: %v %+v", err, got)
	}
	old, err := env.Client.Template(ctx, "web@1")
	if err != nil || *old.Revision != 1 || *old.ImageDigest != v1.Digest {
		t.Fatalf("get @1: %v %+v", err, old)
	}
	for _, v := range []string{"web@3", "web@0", "web@latest", "web@x", "nope"} {
		_, err = env.Client.Template(ctx, v)
		wantCode(t, err, 404, "not_found")
	}

	list, _ := env.Client.Templates(ctx)
	if len(list) != 9 || list[8].Name != "web" {
		t.Fatalf("list: %d, last %+v", len(list), list[len(list)-1])
	}

	// Unknown fields are refused.
	resp, _ := env.Client.Raw(ctx, "POST", "/v1/templates", []byte(`{"name":"x2","image_ref":"`+v1.Ref+`","colour":"red"}`))
	if m := body(t, resp); resp.StatusCode != 400 || m["error"].(map[string]any)["code"] != "invalid_request" {
		t.Fatalf("unknown field: %d %v", resp.StatusCode, m)
	}

	if err := env.Client.DeleteTemplate(ctx, "web"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, env.Client.DeleteTemplate(ctx, "web"), 404, "not_found")
}

func ptr[T any](v T) *T { return &v }
