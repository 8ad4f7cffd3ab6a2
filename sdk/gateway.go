package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/svc-dev/svc/internal/sse"
)

// Gateway talks to the gateway an instance serves at its URL (the second
// API: responses, sessions, files, health, version), through the edge with
// the workspace key in X-Svc-Key.
type Gateway struct{ *InstanceClient }

// Gateway returns a client for the gateway at instanceURL with c's key.
func (c *Client) Gateway(instanceURL string) *Gateway {
	return &Gateway{&InstanceClient{BaseURL: strings.TrimRight(instanceURL, "/"), Key: c.Key, HTTP: c.HTTP}}
}

// ResponseRequest is the body of POST /v1/responses.
type ResponseRequest struct {
	Input           string          `json:"input"`
	Files           []string        `json:"files,omitempty"`
	SessionID       string          `json:"session_id,omitempty"`
	Stream          bool            `json:"stream,omitempty"`
	Model           string          `json:"model,omitempty"`
	Provider        string          `json:"provider,omitempty"`
	ReasoningEffort string          `json:"reasoning_effort,omitempty"`
	Metadata        json.RawMessage `json:"metadata,omitempty"`
	Agent           string          `json:"agent,omitempty"`
}

// TurnError is the error of a failed turn.
type TurnError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Param   string `json:"param,omitempty"`
	Hint    string `json:"hint,omitempty"`
}

// Usage is a turn's token accounting.
type Usage struct {
	InputTokens  int64    `json:"input_tokens"`
	OutputTokens int64    `json:"output_tokens"`
	CostUSD      *float64 `json:"cost_usd,omitempty"`
}

// ContextWindow is the session window as of a turn.
type ContextWindow struct {
	UsedTokens   int64 `json:"used_tokens"`
	WindowTokens int64 `json:"window_tokens"`
}

// Response is the result of a turn.
type Response struct {
	ID         string          `json:"id"`
	SessionID  string          `json:"session_id"`
	Status     string          `json:"status"`
	Agent      string          `json:"agent"`
	Model      *string         `json:"model"`
	Provider   *string         `json:"provider"`
	OutputText string          `json:"output_text"`
	Usage      *Usage          `json:"usage"`
	Context    *ContextWindow  `json:"context"`
	Error      *TurnError      `json:"error"`
	Metadata   json.RawMessage `json:"metadata"`
	Created    int64           `json:"created"`
}

// Event is one streamed turn event. Name is one of the nine event names;
// Data is its JSON payload; ID resumes a stream with Reattach.
type Event struct {
	ID   string
	Name string
	Data json.RawMessage
}

// Text returns the "text" of a delta event.
func (e Event) Text() string {
	var d struct {
		Text string `json:"text"`
	}
	json.Unmarshal(e.Data, &d)
	return d.Text
}

// Terminal reports whether the event ends the stream.
func (e Event) Terminal() bool {
	return e.Name == "response.completed" || e.Name == "response.failed"
}

// EventStream reads a turn's events.
type EventStream struct {
	body io.ReadCloser
	r    *sse.Reader
}

// Next returns the next event; io.EOF after the stream ends.
func (s *EventStream) Next() (Event, error) {
	ev, err := s.r.Next()
	if err != nil {
		return Event{}, err
	}
	return Event{ID: ev.ID, Name: ev.Name, Data: ev.Data}, nil
}

// Close drops the connection; the turn goes on.
func (s *EventStream) Close() error { return s.body.Close() }

func (g *Gateway) request(ctx context.Context, method, path string, body io.Reader, header ...string) (*http.Response, error) {
	req, err := g.NewRequest(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return g.Send(req)
}

func (g *Gateway) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	var header []string
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body, header = strings.NewReader(string(b)), []string{"Content-Type", "application/json"}
	}
	resp, err := g.request(ctx, method, path, body, header...)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		io.Copy(io.Discard, resp.Body)
		return nil
	}
	// A non-streamed turn is prefixed by whitespace ticks: the decoder
	// skips them.
	return json.NewDecoder(resp.Body).Decode(out)
}

// Respond runs a turn and waits for its result. A failed turn is not an
// error: read Status and Error.
func (g *Gateway) Respond(ctx context.Context, req ResponseRequest) (Response, error) {
	req.Stream = false
	var out Response
	err := g.call(ctx, http.MethodPost, "/v1/responses", req, &out)
	return out, err
}

// Stream runs a turn and returns its events as they happen.
func (g *Gateway) Stream(ctx context.Context, req ResponseRequest) (*EventStream, error) {
	req.Stream = true
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	resp, err := g.request(ctx, http.MethodPost, "/v1/responses", strings.NewReader(string(b)), "Content-Type", "application/json", "Accept", "text/event-stream")
	if err != nil {
		return nil, err
	}
	return &EventStream{body: resp.Body, r: sse.NewReader(resp.Body)}, nil
}

// Reattach replays a turn's events and follows it live; with lastEventID
// it resumes after that event.
func (g *Gateway) Reattach(ctx context.Context, responseID, lastEventID string) (*EventStream, error) {
	var header []string
	if lastEventID != "" {
		header = []string{"Last-Event-ID", lastEventID}
	}
	resp, err := g.request(ctx, http.MethodGet, "/v1/responses/"+url.PathEscape(responseID)+"/stream", nil, header...)
	if err != nil {
		return nil, err
	}
	return &EventStream{body: resp.Body, r: sse.NewReader(resp.Body)}, nil
}

// Cancel stops a running turn; it answers at once with the current object.
func (g *Gateway) Cancel(ctx context.Context, responseID string) (Response, error) {
	var out Response
	err := g.call(ctx, http.MethodPost, "/v1/responses/"+url.PathEscape(responseID)+"/cancel", nil, &out)
	return out, err
}

// Health is the gateway's readiness report.
type Health struct {
	OK      bool   `json:"ok"`
	Agent   string `json:"agent"`
	Healthy bool   `json:"healthy"`
	Hint    string `json:"hint,omitempty"`
}

// Health probes the default harness, or agent when not empty.
func (g *Gateway) Health(ctx context.Context, agent string) (Health, error) {
	var out Health
	err := g.call(ctx, http.MethodGet, "/v1/health"+agentQuery(agent), nil, &out)
	return out, err
}

// Version is the gateway's build.
func (g *Gateway) Version(ctx context.Context) (string, error) {
	var out struct {
		Version string `json:"version"`
	}
	err := g.call(ctx, http.MethodGet, "/v1/version", nil, &out)
	return out.Version, err
}

// SessionRow is one entry of the session list.
type SessionRow struct {
	ID           string  `json:"id"`
	Title        *string `json:"title"`
	LastActive   *int64  `json:"last_active"`
	MessageCount *int64  `json:"message_count"`
	Preview      *string `json:"preview"`
}

// Message is one transcript entry.
type Message struct {
	ID        string `json:"id"`
	SessionID string `json:"session_id"`
	Role      string `json:"role"`
	Content   string `json:"content"`
	Thinking  string `json:"thinking,omitempty"`
	CreatedAt int64  `json:"created_at"`
}

// Session is a session read.
type Session struct {
	ID               string         `json:"id"`
	Agent            string         `json:"agent"`
	ActiveResponseID *string        `json:"active_response_id"`
	History          []Message      `json:"history"`
	Context          *ContextWindow `json:"context"`
}

// Sessions lists sessions, newest first.
func (g *Gateway) Sessions(ctx context.Context, agent string) ([]SessionRow, error) {
	var out struct {
		Data []SessionRow `json:"data"`
	}
	err := g.call(ctx, http.MethodGet, "/v1/sessions"+agentQuery(agent), nil, &out)
	return out.Data, err
}

// Session reads one session's transcript.
func (g *Gateway) Session(ctx context.Context, id, agent string) (Session, error) {
	var out Session
	err := g.call(ctx, http.MethodGet, "/v1/sessions/"+url.PathEscape(id)+agentQuery(agent), nil, &out)
	return out, err
}

func agentQuery(agent string) string {
	if agent == "" {
		return ""
	}
	return "?agent=" + url.QueryEscape(agent)
}

// FileEntry is one file of the instance.
type FileEntry struct {
	Name     string `json:"name"`
	Path     string `json:"path"`
	Type     string `json:"type"`
	Size     *int64 `json:"size"`
	Modified int64  `json:"modified"`
	Hidden   bool   `json:"hidden"`
}

// Listing is one directory level.
type Listing struct {
	Path       string      `json:"path"`
	ParentPath *string     `json:"parentPath"`
	Entries    []FileEntry `json:"entries"`
	Truncated  bool        `json:"truncated"`
}

// ListFiles lists a directory (empty path: the agent's workspace).
func (g *Gateway) ListFiles(ctx context.Context, path string) (Listing, error) {
	var out Listing
	q := ""
	if path != "" {
		q = "?path=" + url.QueryEscape(path)
	}
	err := g.call(ctx, http.MethodGet, "/v1/files"+q, nil, &out)
	return out, err
}

// ReadFile streams a file's bytes.
func (g *Gateway) ReadFile(ctx context.Context, path string) (io.ReadCloser, error) {
	resp, err := g.request(ctx, http.MethodGet, "/v1/files/content?path="+url.QueryEscape(path), nil)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// WriteFile uploads r as the file at path (parents are created).
func (g *Gateway) WriteFile(ctx context.Context, path string, r io.Reader, overwrite bool) (FileEntry, error) {
	resp, err := g.request(ctx, http.MethodPut, "/v1/files/content?path="+url.QueryEscape(path)+"&overwrite="+strconv.FormatBool(overwrite), r)
	if err != nil {
		return FileEntry{}, err
	}
	defer resp.Body.Close()
	var out FileEntry
	return out, json.NewDecoder(resp.Body).Decode(&out)
}

// ErrStreamEnded is returned by Collect when a stream ends without a
// terminal event.
var ErrStreamEnded = errors.New("stream ended without a terminal event")

// Collect reads a stream to its terminal event, calling each (if not nil)
// for every event, and returns the terminal one.
func (s *EventStream) Collect(each func(Event)) (Event, error) {
	for {
		ev, err := s.Next()
		if err == io.EOF {
			return Event{}, ErrStreamEnded
		}
		if err != nil {
			return Event{}, err
		}
		if each != nil {
			each(ev)
		}
		if ev.Terminal() {
			return ev, nil
		}
	}
}
