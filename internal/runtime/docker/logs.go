package docker

import (
	"context"
	"io"
	"strconv"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/svc-dev/svc/internal/runtime"
)

// Logs returns the console output as one plain stream. Containers run
// without a TTY, so the engine multiplexes stdout and stderr with frame
// headers; a goroutine strips them into a pipe, in arrival order.
func (d *Driver) Logs(ctx context.Context, id string, opts runtime.LogOptions) (io.ReadCloser, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	tail := "all"
	if opts.Tail > 0 {
		tail = strconv.Itoa(opts.Tail)
	}
	rc, err := d.c.ContainerLogs(ctx, d.name(id), client.ContainerLogsOptions{
		ShowStdout: true,
		ShowStderr: true,
		Follow:     opts.Follow,
		Tail:       tail,
	})
	if err != nil {
		return nil, missing(err, "logs", id)
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := stdcopy.StdCopy(pw, pw, rc)
		rc.Close()
		pw.CloseWithError(err) // nil closes with io.EOF
	}()
	return &logReader{PipeReader: pr, src: rc}, nil
}

// logReader closes the engine stream too, which ends the copy goroutine of
// a follow that nobody reads any more.
type logReader struct {
	*io.PipeReader
	src io.Closer
}

func (r *logReader) Close() error {
	r.src.Close()
	return r.PipeReader.Close()
}
