package agent

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/modeltest"
)

// setup starts a scripted model server and an agent on a temp workspace.
func setup(t *testing.T, mcfg modeltest.Config, mut func(*Config)) (*Agent, *modeltest.Server) {
	t.Helper()
	srv, err := modeltest.Start(mcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	home := t.TempDir()
	cfg := Config{Client: NewClient(srv.URL, mcfg.APIKey), Workspace: home + "/workspace", Home: home}
	if mut != nil {
		mut(&cfg)
	}
	return New(cfg), srv
}

// recorder collects emitted events.
type recorder struct {
	mu     sync.Mutex
	events []harness.Event
	notify chan harness.Event
}

func newRecorder() *recorder { return &recorder{notify: make(chan harness.Event, 1024)} }

func (r *recorder) emit(e harness.Event) error {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	select {
	case r.notify <- e:
	default:
	}
	return nil
}

func (r *recorder) all() []harness.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]harness.Event(nil), r.events...)
}

// text concatenates the text of events named name.
func (r *recorder) text(name string) string {
	var b strings.Builder
	for _, e := range r.all() {
		if e.Name == name {
			b.WriteString(e.Data["text"].(string))
		}
	}
	return b.String()
}

// names lists event names, folding runs of deltas into one entry.
func (r *recorder) names() []string {
	var out []string
	for _, e := range r.all() {
		if len(out) > 0 && out[len(out)-1] == e.Name && strings.HasSuffix(e.Name, ".delta") {
			continue
		}
		out = append(out, e.Name)
	}
	return out
}

// waitFor blocks until an event matching ok arrives (a hang guard, not a
// timing assertion).
func (r *recorder) waitFor(t *testing.T, ok func(harness.Event) bool) harness.Event {
	t.Helper()
	for _, e := range r.all() {
		if ok(e) {
			return e
		}
	}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case e := <-r.notify:
			if ok(e) {
				return e
			}
		case <-deadline:
			t.Fatalf("event never arrived; got %v", r.names())
		}
	}
}

func user(s string) []Message {
	return []Message{{Role: "system", Content: "test"}, {Role: "user", Content: s}}
}

func run(t *testing.T, a *Agent, req Request) (Outcome, *recorder, error) {
	t.Helper()
	rec := newRecorder()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := a.Run(ctx, req, rec.emit)
	return out, rec, err
}

func args(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// toolResults returns the tool messages of a recorded request.
func toolResults(req modeltest.Request) []string {
	var out []string
	for _, m := range req.Messages {
		if m.Role == "tool" {
			out = append(out, m.Text())
		}
	}
	return out
}
