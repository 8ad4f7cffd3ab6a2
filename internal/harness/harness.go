// Package harness defines what the gateway needs from an agent harness. A
// harness runs one turn at a time per session and reports progress through
// emit; the gateway owns response records, ids, event buffers, the terminal
// event and keep-alives, so a dropped client loses nothing. One package per
// harness implements Harness (harness/generala, harness/generalb, ...); the
// registry of provisioned harnesses is built in cmd/svc-gateway.
package harness

import (
	"context"
	"errors"
	"fmt"
)

// The six harness ids of spec/gateway-api.md.
const (
	GeneralA = "general-a"
	GeneralB = "general-b"
	CodingA  = "coding-a"
	CodingB  = "coding-b"
	CodingC  = "coding-c"
	CodingD  = "coding-d"
)

// IDs lists every harness id the gateway accepts in ?agent= and "agent".
var IDs = []string{GeneralA, GeneralB, CodingA, CodingB, CodingC, CodingD}

// Event names a harness may emit. response.created and the two terminal
// events are emitted by the gateway, never by a harness.
const (
	ReasoningDelta     = "response.reasoning.delta"
	OutputTextDelta    = "response.output_text.delta"
	ToolCallGenerating = "response.tool_call.generating"
	ToolCallStarted    = "response.tool_call.started"
	ToolCallCompleted  = "response.tool_call.completed"
	ToolCallFailed     = "response.tool_call.failed"
)

// Event is one streamed event: Name is one of the constants above and Data
// is its JSON payload as the spec gives it ({text}, {tool, label?,
// arguments?}, {tool, duration_ms?}, {tool, error?}).
type Event struct {
	Name string
	Data map[string]any
}

// Turn is one message to run.
type Turn struct {
	SessionID string
	// NewSession is true when the client sent no session_id.
	NewSession      bool
	Input           string
	Files           []string
	Model           string // empty: the harness default
	Provider        string
	ReasoningEffort string // empty: the harness/session default
}

// Usage is token accounting of a turn.
type Usage struct {
	InputTokens     int64    `json:"input_tokens"`
	OutputTokens    int64    `json:"output_tokens"`
	CacheTokens     int64    `json:"-"`
	CostUSD         *float64 `json:"cost_usd"`
	Model           string   `json:"-"` // the model the harness resolved
	ReportedContext bool     `json:"-"`
}

// Context is the session window as of a turn.
type Context struct {
	UsedTokens   int64 `json:"used_tokens"`
	WindowTokens int64 `json:"window_tokens"`
}

// Result is how a turn ended. On cancel (ctx done) a harness returns the
// output so far with ctx.Err().
type Result struct {
	OutputText string
	Usage      *Usage
	// Context is the harness's own measurement; nil when it reports none
	// (the gateway derives one for general-b).
	Context *Context
	// SessionID is set by harnesses that mint their own session ids.
	SessionID string
}

// SessionRow is one entry of GET /v1/sessions; nil fields are untracked.
type SessionRow struct {
	ID           string  `json:"id"`
	Title        *string `json:"title"`
	LastActive   *int64  `json:"last_active"`
	MessageCount *int64  `json:"message_count"`
	Preview      *string `json:"preview"`
}

// Message is one transcript entry of a session read.
type Message struct {
	ID        string `json:"id"`
	SessionID string `json:"session_id"`
	Role      string `json:"role"`
	Content   string `json:"content"`
	Thinking  string `json:"thinking,omitempty"`
	CreatedAt int64  `json:"created_at"`
}

// Model is one entry of GET /v1/models.
type Model struct {
	ID            string `json:"id"`
	Provider      string `json:"provider,omitempty"`
	ContextWindow int64  `json:"context_window,omitempty"`
	Default       bool   `json:"default,omitempty"`
}

// Harness is one agent runtime inside an instance.
type Harness interface {
	// ID is one of IDs.
	ID() string
	// Run executes one turn. It returns when the turn (and any subagent it
	// started) has finished or ctx is cancelled.
	Run(ctx context.Context, turn Turn, emit func(Event) error) (Result, error)
	// Sessions lists sessions, most recent first.
	Sessions(ctx context.Context) ([]SessionRow, error)
	// History reads a transcript; an unknown id is an empty history.
	History(ctx context.Context, sessionID string) ([]Message, error)
	// Rename sets a title; false when no session matched.
	Rename(ctx context.Context, sessionID, title string) (bool, error)
	// Delete removes a transcript; false when no session matched.
	Delete(ctx context.Context, sessionID string) (bool, error)
	// Healthy reports whether the harness can take a turn now.
	Healthy(ctx context.Context) bool
	// Models lists the models the harness can use.
	Models(ctx context.Context) ([]Model, error)
}

// ErrStopped is returned by Run when the input was a harness stop command
// (general-b's "stop", "exit"): no run started, the turn settles cancelled
// with empty output and no usage.
var ErrStopped = errors.New("stop command: no run started")

// PurposeHeader is set by harnesses on model requests that are not the
// turn itself ("title" for title generation, "subagent" for delegated
// tasks), so metering and scripted test servers can tell them apart.
const PurposeHeader = "X-Svc-Purpose"

// Error is a turn or session failure with a spec code (agent_error,
// auth_error, rate_limited, quota_exhausted, context_length, title_conflict,
// rename_unsupported, validation_error, ...).
type Error struct {
	Code    string
	Message string
	Param   string
	Hint    string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Errorf returns a harness error with code.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) {
	var he *Error
	if errors.As(err, &he) {
		return he, true
	}
	return nil, false
}

// SessionIssuer is implemented by harnesses that mint their own session
// ids (coding-b, coding-c, coding-d). The gateway asks it before a turn
// that names a session_id, and answers 400 validation_error (param
// session_id) for an id the harness did not issue.
type SessionIssuer interface {
	Issued(ctx context.Context, sessionID string) (bool, error)
}

// Hinter is implemented by harnesses that can say what the user must do
// before they are healthy (connect an account, set a key); the gateway adds
// it to an unhealthy health answer as "hint".
type Hinter interface {
	Hint() string
}
