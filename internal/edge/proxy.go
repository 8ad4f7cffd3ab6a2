package edge

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/svc-dev/svc/internal/fault"
	"github.com/svc-dev/svc/internal/instance"
	"github.com/svc-dev/svc/internal/runtime"
	"github.com/svc-dev/svc/internal/store"
)

// The proxy addresses a container as "{id}:{port}" rather than by its IP:
// the transport pools connections by that name, so a pooled connection
// always belongs to the instance it was dialled for, whatever address the
// container has after a wake or a restart. dial resolves the name.

type targetKey struct{}

// holdInfo travels to dial in the request's context: dial runs detached
// from the request's cancellation, so it watches the request itself.
type holdInfo struct {
	req    context.Context
	public bool
}

func (e *Edge) newProxy() (*http.Transport, *httputil.ReverseProxy) {
	tr := &http.Transport{
		DialContext:         e.dial,
		MaxIdleConns:        4096,
		MaxIdleConnsPerHost: 512,
		IdleConnTimeout:     90 * time.Second,
		// Bodies pass as they are; no response-header timeout, because a
		// request to a sleeping instance waits for the wake and a turn can
		// take minutes before its first byte.
		// The default 4 KB connection buffers: an idle stream holds them
		// for as long as it lasts, so bigger ones cost memory per stream
		// more than they save on large bodies.
		DisableCompression: true,
	}
	p := &httputil.ReverseProxy{
		Rewrite:   e.rewrite,
		Transport: tr,
		// 0: the proxy flushes every write of streaming answers (SSE, and
		// any answer without a Content-Length, such as a turn's ticking
		// JSON) and lets fixed-length ones go out whole, in one write.
		FlushInterval: 0,
		BufferPool:    bufferPool{},
		ErrorHandler:  e.proxyError,
		// Streams cut by either side are routine; keep them out of stderr.
		ErrorLog: slog.NewLogLogger(e.log.Handler(), slog.LevelDebug),
	}
	return tr, p
}

// forward sends the request to the target's container and streams the
// answer back (WebSocket upgrades included).
func (e *Edge) forward(w http.ResponseWriter, r *http.Request, t target) {
	fw := &forwarding{t: t, hold: holdInfo{req: r.Context(), public: t.public}}
	// An HTTP/1 server otherwise drains and closes the request body when
	// the answer starts; an application that answers before the transport
	// has read the body's end (a gateway streaming a turn, an upload
	// refused early) would then see its connection cut mid-answer.
	http.NewResponseController(w).EnableFullDuplex()
	e.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), targetKey{}, fw)))
}

// forwarding travels in the request's context to rewrite and dial.
type forwarding struct {
	t    target
	hold holdInfo
}

// rewrite makes the outgoing request. The proxy has already dropped
// hop-by-hop and client-sent X-Forwarded-* headers.
func (e *Edge) rewrite(pr *httputil.ProxyRequest) {
	t := pr.In.Context().Value(targetKey{}).(*forwarding).t
	pr.Out.URL.Scheme = "http"
	pr.Out.URL.Host = t.in.ID + ":" + strconv.Itoa(t.port)
	pr.Out.Host = pr.In.Host // the application sees the name it was called by
	stripCredentials(pr.Out.Header, pr.Out.URL, t.public)
	if t.gateway != "" {
		pr.Out.Header.Set("X-Svc-Gateway-Token", t.gateway)
	}
	pr.SetXForwarded()
}

// proxyError renders what went wrong before the answer started.
func (e *Edge) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	var ee *Error
	switch {
	case errors.As(err, &ee):
	case r.Context().Err() != nil:
		return // the client left
	default:
		e.log.Info("proxy", "host", r.Host, "err", err)
		port, _ := strconv.Atoi(r.URL.Port())
		ee = badGateway(port)
	}
	writeError(w, ee)
}

// dial connects to "{id}:{port}" at the container's (cached) address.
// When that fails it looks at the instance again: a running one may have
// a new address (restart); one that went to sleep since the request was
// admitted is woken and waited for.
func (e *Edge) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	id, portStr, _ := strings.Cut(addr, ":")
	port, _ := strconv.Atoi(portStr)
	hi := holdInfo{req: ctx}
	if fw, ok := ctx.Value(targetKey{}).(*forwarding); ok {
		hi = fw.hold
	}
	mark := e.act.mark(id)
	if c, err := e.dialRunning(ctx, id, port, false); err == nil {
		return e.counted(c, mark), nil
	}
	in, err := e.fresh(ctx, id)
	if err != nil {
		return nil, err
	}
	if !awake(in) {
		if err := e.await(hi, id, port, mark); err != nil {
			return nil, err
		}
	}
	if c, err := e.dialRunning(ctx, id, port, true); err == nil {
		return e.counted(c, mark), nil
	}
	return nil, badGateway(port)
}

// awake reports whether an instance runs with no operation in flight, the
// only state whose container takes traffic.
func awake(in store.Instance) bool { return in.Status == instance.Running && in.Op == "" }

// dialRunning dials port at the container's address, read from the cache
// unless refresh.
func (e *Edge) dialRunning(ctx context.Context, id string, port int, refresh bool) (net.Conn, error) {
	if refresh {
		e.addrs.forget(id)
	}
	st, err := e.addrs.get(id, func() (runtime.Status, error) { return e.rt.Inspect(ctx, id) })
	if err != nil {
		return nil, err
	}
	if st.State != runtime.Running || !st.Addr.IsValid() {
		e.addrs.forget(id)
		return nil, errors.New("container not running")
	}
	d := net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(st.Addr.String(), strconv.Itoa(port)))
	if err != nil {
		e.addrs.forget(id)
		return nil, err
	}
	return c, nil
}

// await holds a request until the instance runs and the port accepts a
// connection, waking the instance when it sleeps, for at most the wake
// budget (then 503 wake_timeout). While the checkpoint of a sleep is
// being written it waits for the sleep to finish, then wakes.
func (e *Edge) await(hi holdInfo, id string, port int, mark *mark) error {
	ctx, cancel := context.WithTimeout(hi.req, e.cfg.WakeTimeout)
	defer cancel()
	pause := 20 * time.Millisecond
	for {
		// A request waiting for the instance is activity: the instance it
		// woke must not go back to sleep under it.
		e.act.touch(mark)
		in, err := e.fresh(ctx, id)
		if err != nil {
			return err
		}
		switch {
		case in.PastDue && hi.public:
			return unavailable("")
		case in.PastDue:
			return errSuspended
		case in.Status == instance.Stopped || in.Status == instance.Failed:
			if hi.public {
				return unavailable("")
			}
			return unavailable("the instance is " + in.Status)
		case in.Status == instance.Sleeping && in.Op == "":
			_, err := e.instances.Wake(ctx, id)
			if err == nil {
				continue // look at the woken instance at once
			}
			if !fault.Is(err, fault.TryAgain) && ctx.Err() == nil {
				e.log.Warn("wake failed", "instance", id, "err", err)
			}
		case awake(in):
			if c, err := e.dialRunning(ctx, id, port, true); err == nil {
				c.Close()
				return nil
			}
		}
		// Waking, starting, restarting, the checkpoint still being
		// written, or the port not open yet: look again shortly.
		select {
		case <-ctx.Done():
			if hi.req.Err() != nil {
				return hi.req.Err()
			}
			return errWakeTimeout
		case <-time.After(pause):
		}
		pause = min(pause*2, 250*time.Millisecond)
	}
}

// countedConn marks activity whenever bytes move either way.
type countedConn struct {
	net.Conn
	a *Activity
	m *mark
}

func (e *Edge) counted(c net.Conn, m *mark) net.Conn { return &countedConn{Conn: c, a: e.act, m: m} }

func (c *countedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.a.touch(c.m)
	}
	return n, err
}

func (c *countedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if n > 0 {
		c.a.touch(c.m)
	}
	return n, err
}

// bufferPool reuses the proxy's copy buffers. A stream holds one while it
// waits for its next bytes; 16 KB keeps idle streams cheap and large
// bodies still move in few system calls.
type bufferPool struct{}

var buffers = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

func (bufferPool) Get() []byte  { return *buffers.Get().(*[]byte) }
func (bufferPool) Put(b []byte) { buffers.Put(&b) }
