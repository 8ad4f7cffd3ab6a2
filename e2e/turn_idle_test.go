package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/modeltest"
	"github.com/svc-dev/svc/internal/svctest"
	"github.com/svc-dev/svc/sdk"
)

// TestIdleWaitsForTheTurn: an instance whose gateway runs a turn with no
// client attached (no bytes through the edge) is not put to sleep; once
// the turn ends it sleeps after the idle timeout, and the next request to
// the gateway wakes it. Real svc-gateway, real general-a, scripted model.
func TestIdleWaitsForTheTurn(t *testing.T) {
	model, err := modeltest.Start(modeltest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	env := svctest.New(t, svctest.Options{MinIdleTimeout: 1, WakeTimeout: time.Minute,
		ModelUpstream: model.URL, Model: "test-model"})
	ctx := context.Background()
	env.Template("agent", svctest.Gateway(), 3737)
	in, err := env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "agent", AutoSleep: ptr(true), IdleTimeoutSeconds: ptr(2)})
	if err != nil {
		t.Fatal(err)
	}
	gw := env.Client.Gateway(in.URL)

	// A turn whose model call is held; the client leaves at once.
	hold := make(chan struct{})
	model.Script(modeltest.Reply{Match: func(r modeltest.Request) bool { return r.Header.Get(harness.PurposeHeader) == "" },
		Content: "done at last", Wait: hold})
	stream, err := gw.Stream(ctx, sdk.ResponseRequest{Input: "take your time"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := stream.Next()
	if err != nil || first.Name != "response.created" {
		t.Fatalf("first event %+v %v", first, err)
	}
	stream.Close()
	for deadline := time.Now().Add(30 * time.Second); len(model.Requests()) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the turn never reached the model")
		}
	}
	// Three idle timeouts pass with no byte through the edge.
	time.Sleep(6 * time.Second)
	if got, _ := env.Client.Instance(ctx, in.ID); got.Status != "running" {
		t.Fatalf("slept in the middle of a turn: %s", got.Status)
	}
	close(hold)
	waitStatus(t, env, in.ID, "sleeping", 30*time.Second)

	// Any request to the gateway wakes it (a fresh boot here: files kept).
	h, err := gw.Health(ctx, "")
	if err != nil || !h.OK {
		t.Fatalf("health after the wake: %v %+v", err, h)
	}
	if got, _ := env.Client.Instance(ctx, in.ID); got.Status != "running" {
		t.Fatalf("after the wake: %s", got.Status)
	}
}
