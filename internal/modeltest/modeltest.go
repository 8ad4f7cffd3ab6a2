// Package modeltest is a scripted model server: a real HTTP server speaking
// the OpenAI chat-completions protocol (JSON and streaming SSE, tool calls,
// reasoning deltas, usage, error bodies) that replays scripted replies. It is
// the test double for model vendors we cannot run here, used by harness
// conformance tests, end-to-end tests and benchmarks.
package modeltest

import (
	"encoding/json"
	"net"
	"net/http"
	"sync"
	"time"
)

// ToolCall is one function call the scripted model makes.
type ToolCall struct {
	ID        string // defaults to call_<n>
	Name      string
	Arguments string // JSON object text
}

// Usage overrides the token counts a reply reports.
type Usage struct {
	PromptTokens     int64
	CompletionTokens int64
}

// Reply is one scripted answer to a chat-completions request.
type Reply struct {
	// Match, when set, makes this reply apply only to requests it accepts;
	// queued replies are consumed in order among those that match.
	Match func(Request) bool

	// Status other than 0 or 200 fails the request with an OpenAI error
	// body built from ErrorType, ErrorCode and ErrorMessage.
	Status       int
	ErrorType    string
	ErrorCode    string
	ErrorMessage string

	Reasoning string
	Content   string
	ToolCalls []ToolCall
	Usage     *Usage

	// ChunkSize is the number of bytes per streamed delta (default 8).
	ChunkSize int
	// ChunkDelay is slept between streamed chunks.
	ChunkDelay time.Duration
	// Wait, when set, is waited on before the reply is sent (after the
	// reasoning, if any, when streaming), so a test can hold a turn open.
	Wait <-chan struct{}
}

// Message is one chat message of a recorded request.
type Message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls,omitempty"`
}

// Text returns the message content as plain text (string content, or the
// text parts of an array content).
func (m Message) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) == nil {
		out := ""
		for _, p := range parts {
			out += p.Text
		}
		return out
	}
	return ""
}

// Request is one recorded chat-completions request.
type Request struct {
	Model           string    `json:"model"`
	Messages        []Message `json:"messages"`
	Stream          bool      `json:"stream"`
	ReasoningEffort string    `json:"reasoning_effort"`
	Tools           []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	// Header is the request's HTTP header (Authorization, ...).
	Header http.Header `json:"-"`
}

// LastUser returns the text of the last user message.
func (r Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Text()
		}
	}
	return ""
}

// ToolNames lists the names of the tools the request offered.
func (r Request) ToolNames() []string {
	var names []string
	for _, t := range r.Tools {
		names = append(names, t.Function.Name)
	}
	return names
}

// Model is one entry of GET /v1/models.
type Model struct {
	ID            string `json:"id"`
	ContextWindow int64  `json:"context_window,omitempty"`
}

// Config sets up a Server.
type Config struct {
	// APIKey, when set, is required as "Authorization: Bearer <APIKey>".
	APIKey string
	// Models are listed by GET /v1/models (default: one model "test-model").
	Models []Model
	// Fallback answers requests when no queued reply matches (default:
	// content "echo: " + the last user message).
	Fallback func(Request) Reply
}

// Server is a running scripted model server.
type Server struct {
	// URL is the OpenAI-style base URL, ending in /v1.
	URL string

	cfg      Config
	srv      *http.Server
	ln       net.Listener
	mu       sync.Mutex
	queue    []Reply
	requests []Request
	calls    int
}

// Start runs a Server on a loopback port.
func Start(cfg Config) (*Server, error) {
	return StartOn("127.0.0.1:0", cfg)
}

// StartOn runs a Server on addr (a container reaches it on the host's
// address on the instance network, so end-to-end tests listen wider).
func StartOn(addr string, cfg Config) (*Server, error) {
	if len(cfg.Models) == 0 {
		cfg.Models = []Model{{ID: "test-model", ContextWindow: 128000}}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, ln: ln, URL: "http://" + ln.Addr().String() + "/v1"}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.models)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// Addr is the host:port the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Script queues replies, consumed in order.
func (s *Server) Script(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Pending is the number of queued replies not yet consumed.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Reset drops queued replies and recorded requests.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue, s.requests = nil, nil
}

// next records req and picks its reply.
func (s *Server) next(req Request) Reply {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.calls++
	for i, r := range s.queue {
		if r.Match == nil || r.Match(req) {
			s.queue = append(s.queue[:i:i], s.queue[i+1:]...)
			s.mu.Unlock()
			return r
		}
	}
	s.mu.Unlock()
	if s.cfg.Fallback != nil {
		return s.cfg.Fallback(req)
	}
	return Reply{Content: "echo: " + req.LastUser()}
}
