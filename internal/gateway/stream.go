package gateway

import (
	"net/http"
	"strconv"
	"time"
)

// batch bounds how many events a client is sent between flushes.
const batch = 256

// stream writes rec's events from seq next as Server-Sent Events: each with
// an id, a ":keepalive" comment every KeepAlive whether or not events flow,
// and the connection's response ends after the terminal event.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, rec *record, next int64) error {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if !s.send(w, rc, nil) {
		return nil
	}
	keep := time.NewTicker(s.cfg.KeepAlive)
	defer keep.Stop()
	var buf []byte
	for {
		evs, wait, end := rec.eventsFrom(next, batch)
		buf = buf[:0]
		terminal := false
		for _, ev := range evs {
			buf = appendEvent(buf, ev)
			if ev.seq > 0 {
				next = ev.seq + 1
			}
			if ev.terminal() {
				terminal = true
				break
			}
		}
		if len(buf) > 0 && !s.send(w, rc, buf) {
			return nil // the client left; the turn goes on
		}
		if terminal || end {
			return nil
		}
		if len(evs) == batch {
			continue
		}
		select {
		case <-wait:
		case <-keep.C:
			if !s.send(w, rc, keepalive) {
				return nil
			}
		case <-r.Context().Done():
			return nil
		}
	}
}

var keepalive = []byte(":keepalive\n\n")

// send writes b (if any) and flushes, within WriteTimeout; false means the
// client left or stalled.
func (s *Server) send(w http.ResponseWriter, rc *http.ResponseController, b []byte) bool {
	rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
	if len(b) > 0 {
		if _, err := w.Write(b); err != nil {
			return false
		}
	}
	return rc.Flush() == nil
}

// appendEvent encodes one SSE frame. Payloads are compact JSON, so they
// never contain a newline.
func appendEvent(b []byte, ev event) []byte {
	if ev.seq > 0 {
		b = append(b, "id: "...)
		b = strconv.AppendInt(b, ev.seq, 10)
		b = append(b, '\n')
	}
	b = append(b, "event: "...)
	b = append(b, ev.name...)
	b = append(b, "\ndata: "...)
	b = append(b, ev.data...)
	return append(b, "\n\n"...)
}
