// Command webapp is the test application of the edge's tests and
// benchmarks, compiled into a busybox image at test time. It serves plain
// HTTP, SSE with gaps, WebSocket echo, and large uploads and downloads on
// every port given in -ports, and prints "boot" when it starts (tests
// count boots in the console log to count wakes).
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/websocket"
)

func main() {
	ports := flag.String("ports", "8000", "comma-separated ports to serve")
	delay := flag.Duration("delay", 0, "wait this long before listening (a slow boot)")
	flag.Parse()
	fmt.Printf("boot pid=%d ports=%s\n", os.Getpid(), *ports)
	time.Sleep(*delay)
	for _, p := range strings.Split(*ports, ",") {
		port := p
		go func() {
			log.Fatal(http.ListenAndServe("0.0.0.0:"+port, handler(port)))
		}()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
}

func handler(port string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from port %s\n", port)
	})
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "the application's own /health\n")
	})
	// /headers echoes what arrived, so tests see what the edge forwarded.
	mux.HandleFunc("/headers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"port": port, "host": r.Host, "method": r.Method, "query": r.URL.RawQuery, "headers": r.Header,
		})
	})
	// /sse?n=3&gap=30s sends n events with a silent gap before each.
	mux.HandleFunc("/sse", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		gap, _ := time.ParseDuration(r.URL.Query().Get("gap"))
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		for i := 0; n == 0 || i < n; i++ {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(gap):
			}
			fmt.Fprintf(w, "event: tick\ndata: {\"i\":%d}\n\n", i)
			if err := http.NewResponseController(w).Flush(); err != nil {
				return
			}
		}
	})
	// /early decodes a JSON body and starts a streamed answer at once, as
	// the gateway does with a turn: the decoder may leave the body's end
	// unread when the answer begins.
	mux.HandleFunc("/early", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ N int }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		for i := 0; i < in.N; i++ {
			time.Sleep(5 * time.Millisecond)
			fmt.Fprintf(w, "event: tick\ndata: {\"i\":%d}\n\n", i)
			http.NewResponseController(w).Flush()
		}
	})
	// /ws echoes every WebSocket message.
	mux.Handle("/ws", websocket.Server{Handler: func(c *websocket.Conn) {
		c.MaxPayloadBytes = 64 << 20
		for {
			var msg []byte
			if websocket.Message.Receive(c, &msg) != nil || websocket.Message.Send(c, msg) != nil {
				return
			}
		}
	}})
	// /upload reads the whole body and says how much and what came.
	mux.HandleFunc("/upload", func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"bytes": n, "sha256": hex.EncodeToString(h.Sum(nil))})
	})
	// /download?bytes=N streams N bytes of a fixed pattern.
	mux.HandleFunc("/download", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.ParseInt(r.URL.Query().Get("bytes"), 10, 64)
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		w.Header().Set("Content-Type", "application/octet-stream")
		io.Copy(w, io.LimitReader(&pattern{}, n))
	})
	return mux
}

// pattern is an endless reader of the bytes 0, 1, ... 250, 0, 1, ...
// (a prime period, so shifted or repeated chunks do not match by chance).
type pattern struct{ off int64 }

func (p *pattern) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = byte((p.off + int64(i)) % 251)
	}
	p.off += int64(len(b))
	return len(b), nil
}
