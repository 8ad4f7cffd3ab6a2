package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/svc-dev/svc/internal/harness"
)

// Response statuses.
const (
	statusInProgress = "in_progress"
	statusCompleted  = "completed"
	statusFailed     = "failed"
	statusCancelled  = "cancelled"
)

// Events the gateway emits itself.
const (
	eventCreated   = "response.created"
	eventCompleted = "response.completed"
	eventFailed    = "response.failed"
)

// event is one SSE event of a run, its payload encoded once for every
// client. seq is its SSE id; 0 means none (the synthesized text delta).
type event struct {
	seq  int64
	name string
	data []byte
}

func (e event) terminal() bool { return e.name == eventCompleted || e.name == eventFailed }

// record is one response: its state and its event buffer. The buffer holds
// seq 1..MaxEvents; later events go to a ring of TailEvents so clients
// that keep up still get them, while a replay ends at the buffer (spec).
type record struct {
	id       string
	agent    string
	model    *string
	provider *string
	metadata json.RawMessage
	created  int64
	order    uint64 // position in the store, set by store.add
	busyKey  string
	cancel   context.CancelFunc

	maxEvents  int
	tailEvents int

	mu         sync.Mutex
	sessionID  string
	status     string
	output     strings.Builder // text of the output deltas so far
	outputText string          // final text, set when settled
	usage      *harness.Usage
	context    *harness.Context
	err        *errorBody
	seq        int64
	events     []event
	tail       []event
	expired    bool // the buffer was dropped; replays are synthesized
	finished   time.Time
	changed    chan struct{} // closed on every change, then replaced
	done       chan struct{} // closed when settled
}

func newRecord(id, sessionID, agent string, req turnRequest, cfg Config) *record {
	return &record{
		id: id, sessionID: sessionID, agent: agent,
		model: req.Model, provider: req.Provider, metadata: req.Metadata,
		created:    time.Now().UnixMilli(),
		busyKey:    sessionKey(agent, sessionID),
		maxEvents:  cfg.MaxEvents,
		tailEvents: cfg.TailEvents,
		status:     statusInProgress,
		changed:    make(chan struct{}),
		done:       make(chan struct{}),
	}
}

// push appends an event; r.mu must be held.
func (r *record) push(name string, data []byte) {
	r.seq++
	ev := event{seq: r.seq, name: name, data: data}
	if int(r.seq) <= r.maxEvents {
		r.events = append(r.events, ev)
	} else if r.tailEvents > 0 {
		if r.tail == nil {
			r.tail = make([]event, r.tailEvents)
		}
		r.tail[int(r.seq)%r.tailEvents] = ev
	}
	r.notify()
}

func (r *record) notify() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// emit is the harness's emit callback: it buffers an event of a running
// turn and keeps the output text, and never blocks on clients.
func (r *record) emit(name string, data []byte, text string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.status != statusInProgress {
		return false
	}
	if name == harness.OutputTextDelta {
		r.output.WriteString(text)
	}
	r.push(name, data)
	return true
}

// outcome is how a turn settled.
type outcome struct {
	status     string
	outputText string
	usage      *harness.Usage
	context    *harness.Context
	err        *errorBody
	sessionID  string // a harness-minted id, if any
}

// settle records the outcome, appends the terminal event and wakes every
// waiter.
func (r *record) settle(o outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = o.status
	// The harness's final text wins; without one (a cancelled turn, a
	// harness that only streams) the text is what was streamed.
	r.outputText = o.outputText
	if r.outputText == "" {
		r.outputText = r.output.String()
	}
	r.output.Reset()
	r.usage, r.context, r.err = o.usage, o.context, o.err
	if o.sessionID != "" {
		r.sessionID = o.sessionID
	}
	r.finished = time.Now()
	name, data := r.terminalLocked()
	r.push(name, data)
	close(r.done)
}

// terminalLocked is the terminal event of a settled record.
func (r *record) terminalLocked() (string, []byte) {
	if r.status == statusFailed {
		data, _ := json.Marshal(map[string]any{"error": r.err})
		return eventFailed, data
	}
	data, _ := json.Marshal(struct {
		OutputText string           `json:"output_text"`
		Usage      *harness.Usage   `json:"usage"`
		Context    *harness.Context `json:"context"`
	}{r.outputText, r.usage, r.context})
	return eventCompleted, data
}

// requestCancel cancels a running turn; on a settled one it does nothing.
func (r *record) requestCancel() { r.cancel() }

// expire drops the event buffer of a settled run.
func (r *record) expire() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expired = true
	r.events, r.tail = nil, nil
	r.notify()
}

// responseObject is the Response resource of the spec.
type responseObject struct {
	ID         string           `json:"id"`
	SessionID  string           `json:"session_id"`
	Status     string           `json:"status"`
	Agent      string           `json:"agent"`
	Model      *string          `json:"model"`
	Provider   *string          `json:"provider"`
	OutputText string           `json:"output_text"`
	Usage      *harness.Usage   `json:"usage"`
	Context    *harness.Context `json:"context"`
	Error      *errorBody       `json:"error"`
	Metadata   json.RawMessage  `json:"metadata"`
	Created    int64            `json:"created"`
}

func (r *record) object() responseObject {
	r.mu.Lock()
	defer r.mu.Unlock()
	text := r.outputText
	if r.status == statusInProgress {
		text = r.output.String()
	}
	return responseObject{
		ID: r.id, SessionID: r.sessionID, Status: r.status, Agent: r.agent,
		Model: r.model, Provider: r.provider, OutputText: text,
		Usage: r.usage, Context: r.context, Error: r.err,
		Metadata: r.metadata, Created: r.created,
	}
}

// eventsFrom returns up to max events from seq next on, the channel closed
// at the next change, and end: nothing more will come (the run is over
// and delivered, or the client fell behind what is kept).
func (r *record) eventsFrom(next int64, max int) (evs []event, wait <-chan struct{}, end bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.expired {
		return r.synthesizedLocked(next), nil, true
	}
	settled := r.status != statusInProgress
	switch {
	case next <= int64(len(r.events)):
		hi := min(int64(len(r.events)), next-1+int64(max))
		// The buffer is append-only, so the slice stays valid unlocked.
		return r.events[next-1 : hi : hi], r.changed, false
	case next > r.seq:
		return nil, r.changed, settled
	case len(r.events) < r.maxEvents:
		// Unreachable: a seq past the buffer while it has room.
		return nil, r.changed, true
	case next <= r.seq-int64(r.tailEvents):
		// Fell behind the ring (or asked past the buffer on a replay
		// that started after it stopped): end without the rest.
		return nil, nil, true
	default:
		for s := next; s <= r.seq && len(evs) < max; s++ {
			evs = append(evs, r.tail[int(s)%r.tailEvents])
		}
		return evs, r.changed, false
	}
}

// synthesizedLocked is the replay after the buffer expired: created, one
// delta with the whole text (omitted if none), the terminal event; only
// the parts after Last-Event-ID next-1. The delta has no id: it cannot be
// resumed into.
func (r *record) synthesizedLocked(next int64) []event {
	var evs []event
	if next <= 1 {
		data, _ := json.Marshal(map[string]string{"id": r.id, "session_id": r.sessionID})
		evs = append(evs, event{seq: 1, name: eventCreated, data: data})
	}
	if next > r.seq {
		return evs
	}
	if r.outputText != "" {
		data, _ := json.Marshal(map[string]string{"text": r.outputText})
		evs = append(evs, event{name: harness.OutputTextDelta, data: data})
	}
	name, data := r.terminalLocked()
	return append(evs, event{seq: r.seq, name: name, data: data})
}

// settledAt is when the turn settled; zero while it runs.
func (r *record) settledAt() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.finished
}
