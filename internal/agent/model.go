package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/svc-dev/svc/internal/harness"
)

// Environment variables the gateway reads the model endpoint from; named
// here because error hints tell the user which one to set.
const (
	EnvBaseURL = "SVC_MODEL_BASE_URL"
	EnvAPIKey  = "SVC_MODEL_API_KEY"
	EnvModel   = "SVC_MODEL"
)

// Message is one chat-completions message.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// ToolCall is a function call requested by the model.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function and carries its JSON arguments.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolDef is a tool offered to the model.
type ToolDef struct {
	Type     string      `json:"type"`
	Function FunctionDef `json:"function"`
}

// FunctionDef describes a tool's function and its JSON-schema parameters.
type FunctionDef struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

// Call is one chat-completions request.
type Call struct {
	Model           string
	Messages        []Message
	Tools           []ToolDef
	ToolChoice      string // "auto" when tools are set and this is empty
	ReasoningEffort string // omitted when empty
	Purpose         string // sent as harness.PurposeHeader when set
}

// Tokens is the usage one model call reported.
type Tokens struct {
	Prompt     int64
	Completion int64
	Cached     int64
	CostUSD    *float64
}

// Completion is what one streamed call produced. On error it holds what
// arrived before the error.
type Completion struct {
	Content      string
	Reasoning    string
	ToolCalls    []ToolCall
	FinishReason string
	Model        string
	Usage        *Tokens
}

// Handler receives a call's deltas as they arrive; nil fields are skipped.
// An error returned by a handler aborts the call with that error.
type Handler struct {
	Reasoning func(text string) error
	Content   func(text string) error
	// ToolName is called once per tool call, when its name arrives.
	ToolName func(name string) error
}

// Client talks to one OpenAI-compatible endpoint. It uses only the common
// protocol (OpenAI, vLLM, Ollama and the platform's managed model all speak
// it): streaming with include_usage, tools with tool_choice auto, and
// reasoning_effort when set.
type Client struct {
	BaseURL string // ".../v1"
	APIKey  string
	HTTP    *http.Client
	// IdleTimeout fails a call when the stream stays silent this long
	// (default 5 minutes: big local models can think quietly for a while).
	IdleTimeout time.Duration
}

// NewClient returns a client for baseURL with a transport suited to long
// streams (no overall timeout; cancellation comes from the context).
func NewClient(baseURL, apiKey string) *Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.MaxIdleConnsPerHost = 128
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), APIKey: apiKey, HTTP: &http.Client{Transport: tr}}
}

// Configured reports whether a base URL is set.
func (c *Client) Configured() bool { return c != nil && c.BaseURL != "" }

func (c *Client) newRequest(ctx context.Context, method, path string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, bytes.NewReader(body))
	if err != nil {
		return nil, &harness.Error{Code: "agent_error", Message: "invalid model base URL: " + err.Error(),
			Hint: "set " + EnvBaseURL + " to the endpoint's OpenAI-compatible base URL, e.g. http://host:8000/v1"}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	return req, nil
}

type chatRequest struct {
	Model           string         `json:"model"`
	Messages        []Message      `json:"messages"`
	Stream          bool           `json:"stream"`
	StreamOptions   map[string]any `json:"stream_options,omitempty"`
	Tools           []ToolDef      `json:"tools,omitempty"`
	ToolChoice      string         `json:"tool_choice,omitempty"`
	ReasoningEffort string         `json:"reasoning_effort,omitempty"`
}

// Stream runs one streaming chat completion, calling h as deltas arrive.
// Errors are *harness.Error with a spec turn code, or ctx.Err() when ctx
// ended first.
func (c *Client) Stream(ctx context.Context, call Call, h Handler) (Completion, error) {
	if !c.Configured() {
		return Completion{}, NotConfigured()
	}
	body := chatRequest{
		Model: call.Model, Messages: call.Messages, Stream: true,
		StreamOptions:   map[string]any{"include_usage": true},
		Tools:           call.Tools,
		ReasoningEffort: call.ReasoningEffort,
	}
	if len(call.Tools) > 0 {
		body.ToolChoice = call.ToolChoice
		if body.ToolChoice == "" {
			body.ToolChoice = "auto"
		}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return Completion{}, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := c.newRequest(ctx, http.MethodPost, "/chat/completions", raw)
	if err != nil {
		return Completion{}, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if call.Purpose != "" {
		req.Header.Set(harness.PurposeHeader, call.Purpose)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return Completion{}, c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return Completion{}, statusError(resp.StatusCode, b)
	}
	acc := newAccumulator(h)
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "application/json" {
		// Some servers answer a streaming request with one JSON body.
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxEventBytes))
		if err != nil {
			return acc.out, c.transportError(ctx, err)
		}
		return acc.out, c.transportError(ctx, acc.whole(b))
	}
	body2 := &idleReader{r: resp.Body, timeout: c.idleTimeout(), cancel: cancel}
	defer body2.stop()
	err = readEvents(body2, acc.chunk)
	return acc.out, c.transportError(ctx, err)
}

func (c *Client) idleTimeout() time.Duration {
	if c.IdleTimeout > 0 {
		return c.IdleTimeout
	}
	return 5 * time.Minute
}

var errIdle = errors.New("model stream idle")

// transportError turns a read or dial failure into a turn error; a caller
// cancellation stays ctx.Err() so Run can return it as the spec asks.
func (c *Client) transportError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var he *handlerError
	if errors.As(err, &he) {
		return err // the caller's own failure, not the endpoint's
	}
	if _, ok := harness.AsError(err); ok {
		return err
	}
	if cause := context.Cause(ctx); errors.Is(cause, errIdle) {
		return &harness.Error{Code: "timeout", Message: fmt.Sprintf("the model sent nothing for %s", c.idleTimeout()),
			Hint: "the model endpoint may be overloaded; retry"}
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return &harness.Error{Code: "agent_error", Message: "model endpoint unreachable: " + err.Error(),
		Hint: "check that " + EnvBaseURL + " (" + c.BaseURL + ") is reachable from the instance"}
}

// NotConfigured is the error of a turn when no endpoint is set.
func NotConfigured() *harness.Error {
	return &harness.Error{Code: "agent_error", Message: "no model endpoint is configured",
		Hint: "set " + EnvBaseURL + " (and " + EnvAPIKey + ", " + EnvModel + ") in the gateway's environment"}
}

// idleReader cancels the request when no bytes arrive for timeout.
type idleReader struct {
	r       io.Reader
	timeout time.Duration
	cancel  context.CancelCauseFunc
	timer   *time.Timer
}

func (ir *idleReader) Read(p []byte) (int, error) {
	if ir.timer == nil {
		ir.timer = time.AfterFunc(ir.timeout, func() { ir.cancel(errIdle) })
	}
	n, err := ir.r.Read(p)
	if n > 0 {
		ir.timer.Reset(ir.timeout)
	}
	return n, err
}

func (ir *idleReader) stop() {
	if ir.timer != nil {
		ir.timer.Stop()
	}
}
