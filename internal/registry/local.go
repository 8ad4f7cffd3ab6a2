package registry

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// localHost names the registry in the references Import writes to. Requests
// to it never touch the network: localTransport hands them to Handler.
const localHost = "svcd-registry.internal"

// inProcessAddr is the remote address of in-process requests, which the log
// bridge recognises.
const inProcessAddr = "in-process"

// copyJobs is how many blobs one copy moves at once.
const copyJobs = 4

// localRepo returns repo in our registry, as ggcr addresses it.
func (r *Registry) localRepo(repo string) (name.Repository, error) {
	return name.NewRepository(localHost+"/"+repo, name.Insecure, name.StrictValidation)
}

// localOptions are the ggcr options that reach our registry in-process, with
// the internal credential, through the same auth and validation as any client.
func (r *Registry) localOptions(ctx context.Context) []remote.Option {
	return []remote.Option{
		remote.WithContext(ctx),
		remote.WithTransport(r.local),
		remote.WithAuth(&authn.Basic{Username: r.cred.Username, Password: r.cred.Password}),
		remote.WithJobs(copyJobs),
		remote.WithUserAgent("svcd"),
	}
}

// localTransport serves requests with an http.Handler in the same process.
// Import streams each blob from the source response straight into the
// registry's upload handler: no listener is needed (Import works before svcd
// binds one) and no blob makes a second trip through a socket. Bodies flow
// through an io.Pipe, so nothing is buffered whole.
type localTransport struct {
	h        http.Handler
	inflight *sync.WaitGroup
}

func (t localTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	body := &trackedBody{rc: req.Body}
	if req.Body == nil {
		body.rc = http.NoBody
	}
	sreq := req.Clone(ctx)
	sreq.Body = body
	sreq.RequestURI = req.URL.RequestURI()
	sreq.RemoteAddr = inProcessAddr
	if sreq.Host == "" {
		sreq.Host = req.URL.Host
	}
	// A client request with a body and ContentLength 0 means "unknown",
	// which a server request spells -1.
	if req.Body != nil && req.Body != http.NoBody && req.ContentLength == 0 {
		sreq.ContentLength = -1
	}

	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, body: pw, head: req.Method == http.MethodHead, ready: make(chan struct{})}
	t.inflight.Add(1)
	go func() {
		defer t.inflight.Done()
		defer body.Close()
		defer func() {
			if p := recover(); p != nil {
				w.WriteHeader(http.StatusInternalServerError)
				w.commit()
				pw.CloseWithError(fmt.Errorf("registry handler panicked: %v", p))
				return
			}
			pw.CloseWithError(w.commit())
		}()
		t.h.ServeHTTP(w, sreq)
	}()

	select {
	case <-w.ready:
	case <-ctx.Done():
		pr.CloseWithError(ctx.Err())
		return nil, ctx.Err()
	}
	// A request body that failed to read (the source of a streamed blob
	// broke off) is the client's error, as it would be over a socket.
	if err := body.err(); err != nil {
		pr.CloseWithError(err)
		return nil, err
	}
	resp := &http.Response{
		Status:        fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          pr,
		ContentLength: -1,
		Request:       req,
	}
	if n, err := strconv.ParseInt(w.sent.Get("Content-Length"), 10, 64); err == nil {
		resp.ContentLength = n
	}
	if req.Method == http.MethodHead {
		resp.Body = http.NoBody
		pr.Close()
	}
	return resp, nil
}

// pipeWriter is the handler's side of localTransport. Like net/http's
// server it buffers the start of a response: the client sees nothing until
// the handler returns, flushes, or has written more than bufSize bytes.
// distribution finishes an upload's bookkeeping after writing its status;
// handing the status over at once would let the client's next request race
// with that bookkeeping.
type pipeWriter struct {
	header http.Header
	body   *io.PipeWriter
	head   bool

	buf    []byte
	status int
	once   sync.Once
	ready  chan struct{}
	sent   http.Header
}

const bufSize = 4096

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(code int) {
	if code < 200 || w.status != 0 {
		return // informational responses are not passed on
	}
	w.status = code
	// Later header changes are not sent, as over a socket.
	w.sent = w.header.Clone()
}

func (w *pipeWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.head {
		return len(p), nil
	}
	if w.buf != nil || !w.committed() {
		if len(w.buf)+len(p) <= bufSize {
			w.buf = append(w.buf, p...)
			return len(p), nil
		}
		if err := w.commit(); err != nil {
			return 0, err
		}
	}
	return w.body.Write(p)
}

func (w *pipeWriter) Flush() { w.commit() }

// commit hands the status and headers to the client, then the buffered body.
func (w *pipeWriter) commit() error {
	w.WriteHeader(http.StatusOK)
	w.once.Do(func() { close(w.ready) })
	if w.buf == nil {
		return nil
	}
	b := w.buf
	w.buf = nil
	_, err := w.body.Write(b)
	return err
}

func (w *pipeWriter) committed() bool {
	select {
	case <-w.ready:
		return true
	default:
		return false
	}
}

// trackedBody remembers the first read error other than EOF.
type trackedBody struct {
	rc io.ReadCloser

	mu      sync.Mutex
	readErr error
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && err != io.EOF {
		b.mu.Lock()
		if b.readErr == nil {
			b.readErr = err
		}
		b.mu.Unlock()
	}
	return n, err
}

func (b *trackedBody) Close() error { return b.rc.Close() }

func (b *trackedBody) err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.readErr
}
