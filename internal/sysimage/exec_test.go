package sysimage_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"
)

// execIn runs cmd in a running container and returns its stdout, failing
// the test on a non-zero exit.
func execIn(t *testing.T, c *client.Client, id string, cmd ...string) string {
	t.Helper()
	ctx := context.Background()
	created, err := c.ExecCreate(ctx, id, client.ExecCreateOptions{AttachStdout: true, AttachStderr: true, Cmd: cmd})
	if err != nil {
		t.Fatal(err)
	}
	att, err := c.ExecAttach(ctx, created.ID, client.ExecAttachOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer att.Close()
	var stdout, stderr bytes.Buffer
	if _, err := stdcopy.StdCopy(&stdout, &stderr, att.Reader); err != nil {
		t.Fatal(err)
	}
	res, err := c.ExecInspect(ctx, created.ID, client.ExecInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("%q exited %d: %s%s", cmd, res.ExitCode, stdout.String(), stderr.String())
	}
	return stdout.String()
}
