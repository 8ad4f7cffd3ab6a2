package sysimage_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/svctest"
	"github.com/svc-dev/svc/internal/sysimage"
	"github.com/svc-dev/svc/internal/sysimage/sysimagetest"
	"github.com/svc-dev/svc/sdk"
)

// Publishing works next to a running svcd on the same data directory (as
// `svcd admin images build` does): the new release is what the next create
// runs, and its instance boots with the gateway up, root in the agent's
// home, and the workspace seeded onto the instance disk.
func TestPublishIntoRunningServer(t *testing.T) {
	e := svctest.New(t, svctest.Options{})
	b := sysimagetest.Builder(t)
	ctx := context.Background()
	data, err := sysimage.OpenData(ctx, e.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	p := &sysimage.Publisher{Docker: b.Docker, Store: data.Store, Registry: data.Registry, Logf: t.Logf}
	pubs, err := sysimage.Release(ctx, b, p, "svc-general-small")
	data.Close()
	if err != nil {
		t.Fatal(err)
	}

	tpl, err := e.Client.Template(ctx, "svc-general-small")
	if err != nil {
		t.Fatal(err)
	}
	if tpl.ImageDigest == nil || *tpl.ImageDigest != pubs[0].Release.ImageDigest || tpl.ImageRef == nil {
		t.Fatalf("svcd's catalog shows %+v, want the release just published %+v", tpl, pubs[0].Release)
	}
	in, err := e.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "svc-general-small"})
	if err != nil {
		t.Fatal(err)
	}
	if in.Status != "running" {
		t.Fatalf("instance is %s, want running", in.Status)
	}
	st, err := e.Server.Runtime.Inspect(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	row, err := e.Server.Store.Instance(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	var health struct {
		OK    bool   `json:"ok"`
		Agent string `json:"agent"`
	}
	getJSON(t, fmt.Sprintf("http://%s:3737/v1/health", st.Addr), row.GatewayToken, 10*time.Second, &health)
	if !health.OK || health.Agent != "general-a" {
		t.Errorf("health %+v, want ok from general-a", health)
	}
	res, err := e.Client.Exec(ctx, in.ID, sdk.ExecRequest{Command: []string{"sh", "-c", "id -u; echo $HOME; cd ~ && pwd; ls -d .svc-gateway/workspace"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "0\n/home/user\n/home/user\n.svc-gateway/workspace\n"; res.Stdout != want || res.ExitCode != 0 {
		t.Errorf("exec: %q %q (exit %d), want %q", res.Stdout, res.Stderr, res.ExitCode, want)
	}
	if !strings.HasPrefix(*tpl.ImageRef, "svc/svc-general-small:") {
		t.Errorf("image_ref %q is not the public name", *tpl.ImageRef)
	}
}
