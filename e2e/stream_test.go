package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/websocket"

	"github.com/svc-dev/svc/internal/svctest"
	"github.com/svc-dev/svc/sdk"
)

// pattern is the test application's download content: 0..250 repeating.
type pattern struct{ off int64 }

func (p *pattern) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = byte((p.off + int64(i)) % 251)
	}
	p.off += int64(len(b))
	return len(b), nil
}

// heapWatch samples the process's heap (svcd runs in this process) while
// a transfer runs and reports the peak growth.
func heapWatch() (stop func() uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > base && ms.HeapAlloc-base > peak.Load() {
				peak.Store(ms.HeapAlloc - base)
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return peak.Load() }
}

// TestEdgeStreams: SSE through the edge arrives event by event across
// silent gaps longer than 30 seconds; WebSocket upgrades pass; a 512 MiB
// upload and download stream through without being held in memory.
func TestEdgeStreams(t *testing.T) {
	env := svctest.New(t, svctest.Options{})
	ctx := context.Background()
	env.Template("web", svctest.WebApp(8000), 8000)
	in, err := env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "web"})
	if err != nil {
		t.Fatal(err)
	}
	ic := env.Client.InstanceClient(in)

	t.Run("sse", func(t *testing.T) {
		t.Parallel()
		// An endless stream with 31 s of silence before each event: the
		// events arriving one by one (the stream never ends) proves the
		// edge neither buffers nor times out an idle stream.
		resp, err := ic.Get(ctx, "/sse?gap=31s")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("content type %q", resp.Header.Get("Content-Type"))
		}
		sc := bufio.NewScanner(resp.Body)
		for i := 0; i < 2; {
			if !sc.Scan() {
				t.Fatalf("stream ended after %d events: %v", i, sc.Err())
			}
			if line := sc.Text(); strings.HasPrefix(line, "data:") {
				if want := fmt.Sprintf(`data: {"i":%d}`, i); line != want {
					t.Fatalf("event %d: %q", i, line)
				}
				i++
			}
		}
	})

	t.Run("websocket", func(t *testing.T) {
		t.Parallel()
		u, _ := url.Parse(in.URL)
		cfg, err := websocket.NewConfig("ws://"+u.Host+"/ws", in.URL)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Header.Set("X-Svc-Key", env.Client.Key)
		conn, err := net.Dial("tcp", "127.0.0.1:"+u.Port()) // *.localhost is loopback
		if err != nil {
			t.Fatal(err)
		}
		ws, err := websocket.NewClient(cfg, conn)
		if err != nil {
			t.Fatalf("upgrade through the edge: %v", err)
		}
		defer ws.Close()
		big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
		for _, msg := range [][]byte{[]byte("hello"), big, []byte("bye")} {
			if err := websocket.Message.Send(ws, msg); err != nil {
				t.Fatal(err)
			}
			var got []byte
			if err := websocket.Message.Receive(ws, &got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, msg) {
				t.Fatalf("echo of %d bytes came back as %d bytes", len(msg), len(got))
			}
		}
		// Without the key the upgrade is refused by the edge.
		cfg.Header.Del("X-Svc-Key")
		conn, _ = net.Dial("tcp", "127.0.0.1:"+u.Port())
		if _, err := websocket.NewClient(cfg, conn); err == nil {
			t.Fatal("upgrade without a key")
		}
	})

	t.Run("large", func(t *testing.T) {
		// Not parallel: it measures this process's heap.
		const size = 512 << 20
		stop := heapWatch()
		req, _ := ic.NewRequest(ctx, "PUT", "/upload", io.LimitReader(&pattern{}, size))
		req.ContentLength = -1 // chunked: nothing knows the size up front
		resp, err := ic.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var up struct {
			Bytes  int64  `json:"bytes"`
			SHA256 string `json:"sha256"`
		}
		json.NewDecoder(resp.Body).Decode(&up)
		resp.Body.Close()
		want := sha256.New()
		io.Copy(want, io.LimitReader(&pattern{}, size))
		wantSum := hex.EncodeToString(want.Sum(nil))
		if up.Bytes != size || up.SHA256 != wantSum {
			t.Fatalf("upload arrived as %d bytes %s", up.Bytes, up.SHA256)
		}
		resp, err = ic.Get(ctx, fmt.Sprintf("/download?bytes=%d", size))
		if err != nil {
			t.Fatal(err)
		}
		got := sha256.New()
		n, err := io.Copy(got, resp.Body)
		resp.Body.Close()
		if err != nil || n != size || hex.EncodeToString(got.Sum(nil)) != wantSum {
			t.Fatalf("download: %d bytes, %v", n, err)
		}
		if peak := stop(); peak > 64<<20 {
			t.Fatalf("heap grew by %d MiB moving 2 x 512 MiB through the edge", peak>>20)
		}
	})
}

// TestEdgeTLS: with a certificate the one listener serves the API and the
// edge over HTTPS with HTTP/2, and SSE streams over it.
func TestEdgeTLS(t *testing.T) {
	cert, key, pool := selfSigned(t)
	env := svctest.New(t, svctest.Options{TLSCert: cert, TLSKey: key})
	tr := sdk.Transport()
	tr.TLSClientConfig.RootCAs = pool
	env.Client.HTTP = &http.Client{Transport: tr}
	ctx := context.Background()
	if !strings.HasPrefix(env.Server.URL, "https://") {
		t.Fatalf("server URL %s", env.Server.URL)
	}
	env.Template("web", svctest.WebApp(8000), 8000)
	in, err := env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "web"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(in.URL, "https://"+in.ID+".localhost:") {
		t.Fatalf("instance URL %s", in.URL)
	}
	ic := env.Client.InstanceClient(in)
	resp, err := ic.Get(ctx, "/sse?n=3&gap=10ms")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 || strings.Count(string(b), "event: tick") != 3 {
		t.Fatalf("SSE over TLS: %s %q", resp.Proto, b)
	}
	su, err := env.Client.SignedURL(ctx, in.ID, sdk.SignedURLRequest{})
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	code, _, h := fetch(t, hc, "GET", su.URL, nil, nil)
	if code != 302 || !strings.Contains(h.Get("Set-Cookie"), "Secure") {
		t.Fatalf("signed URL over TLS: %d %v", code, h)
	}
}

// TestEdgeEarlyAnswer: an application that starts its answer before the
// edge has read the end of the request body (the gateway does this with
// every turn) gets its whole answer relayed; an HTTP/1 server would
// otherwise close the request body under the proxy and cut the stream.
func TestEdgeEarlyAnswer(t *testing.T) {
	env := svctest.New(t, svctest.Options{})
	env.Template("webapp", svctest.WebApp(8000), 8000)
	ctx := context.Background()
	in, err := env.Client.CreateInstance(ctx, sdk.CreateInstance{Template: "webapp"})
	if err != nil {
		t.Fatal(err)
	}
	ic := env.Client.InstanceClient(in)
	for i := 0; i < 40; i++ {
		req, _ := ic.NewRequest(ctx, "POST", "/early", strings.NewReader(`{"n":5}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := ic.Send(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || strings.Count(string(b), "event: tick") != 5 {
			t.Fatalf("request %d: %v after %q", i, err, b)
		}
	}
}
