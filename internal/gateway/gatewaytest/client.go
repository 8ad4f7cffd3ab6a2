// Package gatewaytest is a test client for the gateway API: JSON calls,
// SSE streams and replays over real HTTP, failing the test on transport
// errors. The gateway's own tests and the harness conformance suite use
// it.
package gatewaytest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/sse"
)

// Client calls one gateway. Header is sent on every request (the token).
type Client struct {
	t      testing.TB
	URL    string
	Header http.Header
}

// New returns a client for the gateway at url.
func New(t testing.TB, url string) *Client {
	return &Client{t: t, URL: url, Header: http.Header{}}
}

// Do sends a request with body (string, []byte, or a value encoded as
// JSON) and header pairs; the response body is closed at cleanup.
func (c *Client) Do(method, path string, body any, header ...string) *http.Response {
	c.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	case io.Reader:
		r = b
	default:
		js, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		r = bytes.NewReader(js)
	}
	req, err := http.NewRequest(method, c.URL+path, r)
	if err != nil {
		c.t.Fatal(err)
	}
	for k, v := range c.Header {
		req.Header[k] = v
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// Call sends a request and decodes a JSON object reply.
func (c *Client) Call(method, path string, body any, header ...string) (int, map[string]any) {
	c.t.Helper()
	resp := c.Do(method, path, body, header...)
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		c.t.Fatalf("%s %s: status %d, body %q is not a JSON object: %v", method, path, resp.StatusCode, raw, err)
	}
	return resp.StatusCode, out
}

// Stream posts body as a streaming turn and returns the open stream.
func (c *Client) Stream(body map[string]any) (*http.Response, *Stream) {
	c.t.Helper()
	body["stream"] = true
	resp := c.Do("POST", "/v1/responses", body)
	if resp.StatusCode != 200 {
		raw, _ := io.ReadAll(resp.Body)
		c.t.Fatalf("stream: status %d: %s", resp.StatusCode, raw)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		c.t.Fatalf("stream Content-Type %q", ct)
	}
	return resp, NewStream(c.t, resp.Body)
}

// Replay reads GET /v1/responses/{id}/stream to its end.
func (c *Client) Replay(id string, header ...string) []Event {
	c.t.Helper()
	resp := c.Do("GET", "/v1/responses/"+id+"/stream", nil, header...)
	if resp.StatusCode != 200 {
		raw, _ := io.ReadAll(resp.Body)
		c.t.Fatalf("replay: status %d: %s", resp.StatusCode, raw)
	}
	return NewStream(c.t, resp.Body).All()
}

// Event is one SSE event with its JSON payload decoded.
type Event struct {
	ID   string
	Name string
	Data map[string]any
}

// Stream reads events, failing the test on malformed frames.
type Stream struct {
	*sse.Reader
	t testing.TB
}

// NewStream reads events from r.
func NewStream(t testing.TB, r io.Reader) *Stream { return &Stream{sse.NewReader(r), t} }

// Next returns the next event, or false at the end of the stream.
func (s *Stream) Next() (Event, bool) {
	s.t.Helper()
	ev, err := s.Reader.Next()
	if errors.Is(err, io.EOF) {
		return Event{}, false
	}
	if err != nil {
		s.t.Fatalf("stream: %v", err)
	}
	out := Event{ID: ev.ID, Name: ev.Name}
	if err := json.Unmarshal(ev.Data, &out.Data); err != nil {
		s.t.Fatalf("event %s data %q: %v", ev.Name, ev.Data, err)
	}
	return out, true
}

// All reads every remaining event.
func (s *Stream) All() []Event {
	s.t.Helper()
	var evs []Event
	for {
		ev, ok := s.Next()
		if !ok {
			return evs
		}
		evs = append(evs, ev)
	}
}

// Until reads events up to and including the first named name.
func (s *Stream) Until(name string) []Event {
	s.t.Helper()
	var evs []Event
	for {
		ev, ok := s.Next()
		if !ok {
			s.t.Fatalf("stream ended before %s (got %v)", name, Names(evs))
		}
		evs = append(evs, ev)
		if ev.Name == name {
			return evs
		}
	}
}

// Names lists the events' names.
func Names(evs []Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Name)
	}
	return out
}

// WantError checks a gateway error envelope.
func WantError(t testing.TB, status int, body map[string]any, wantStatus int, code, param string) {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("status %d, want %d (body %v)", status, wantStatus, body)
	}
	e, ok := body["error"].(map[string]any)
	if !ok {
		t.Fatalf("body %v has no error object", body)
	}
	if e["code"] != code {
		t.Fatalf("code %v, want %s (%v)", e["code"], code, e)
	}
	if got, _ := e["param"].(string); got != param {
		t.Fatalf("param %q, want %q (%v)", got, param, e)
	}
	if m, _ := e["message"].(string); m == "" {
		t.Fatalf("error without message: %v", e)
	}
}

// Eventually polls cond, for behaviour that follows a timer.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
