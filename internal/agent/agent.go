// Package agent is the built-in agent: a tool-calling loop on an
// OpenAI-compatible chat-completions endpoint (streaming), its tools (shell,
// files, web fetch, subagents) and the model client. It knows nothing of
// sessions; the general-a and general-b harnesses persist transcripts and
// call Run once per turn.
package agent

import (
	"context"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/svc-dev/svc/internal/harness"
)

// Config holds the agent's endpoint, places and limits. Zero values take
// the defaults documented on each field.
type Config struct {
	Client *Client
	// Workspace is the shell's working directory and the base of relative
	// paths; Home is what "~" means in tool paths.
	Workspace string
	Home      string

	MaxSteps         int // model calls per turn (default 50)
	SubagentMaxSteps int // model calls per subagent (default 25)
	MaxSubagents     int // subagents running at once per delegate_task (default 4)
	MaxTasks         int // tasks per delegate_task call (default 8)

	ShellTimeout    time.Duration // default per command (2 minutes)
	ShellMaxTimeout time.Duration // cap of timeout_seconds (30 minutes)
	ShellOutputCap  int           // bytes kept of a command's output (32 KiB)
	Grace           time.Duration // SIGTERM to SIGKILL on timeout or cancel (2s)

	ReadMaxBytes int // read_file cap (256 KiB)

	FetchTimeout  time.Duration // web_fetch (30s)
	FetchMaxBytes int           // bytes read from a response (5 MiB)
	FetchMaxText  int           // text handed to the model (100 KiB)
	FetchClient   *http.Client

	ResultMax int // any tool result handed to the model (128 KiB)
}

func (c *Config) defaults() {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.MaxSteps, 50)
	def(&c.SubagentMaxSteps, 25)
	def(&c.MaxSubagents, 4)
	def(&c.MaxTasks, 8)
	defDur(&c.ShellTimeout, 2*time.Minute)
	defDur(&c.ShellMaxTimeout, 30*time.Minute)
	def(&c.ShellOutputCap, 32<<10)
	defDur(&c.Grace, 2*time.Second)
	def(&c.ReadMaxBytes, 256<<10)
	defDur(&c.FetchTimeout, 30*time.Second)
	def(&c.FetchMaxBytes, 5<<20)
	def(&c.FetchMaxText, 100<<10)
	def(&c.ResultMax, 128<<10)
	if c.FetchClient == nil {
		c.FetchClient = &http.Client{}
	}
	if c.Workspace != "" {
		c.Workspace = filepath.Clean(c.Workspace)
	}
}

// Agent runs turns. It is safe for concurrent use by many sessions.
type Agent struct {
	cfg    Config
	tools  []*tool
	byName map[string]*tool
}

// New returns an agent; cfg.Client must be set (it may be unconfigured,
// in which case turns fail with a hint naming the env vars).
func New(cfg Config) *Agent {
	cfg.defaults()
	a := &Agent{cfg: cfg, byName: map[string]*tool{}}
	a.tools = a.toolSet()
	for _, t := range a.tools {
		a.byName[t.def.Name] = t
	}
	return a
}

// Workspace is the directory the agent works in.
func (a *Agent) Workspace() string { return a.cfg.Workspace }

// Request is one turn to run.
type Request struct {
	Model           string
	ReasoningEffort string // sent as reasoning_effort; empty omits it
	// Messages is the whole conversation: system prompt, history and the
	// new user message.
	Messages []Message
	// Purpose is sent as harness.PurposeHeader on the turn's model calls
	// (empty for a user turn).
	Purpose string
}

// Outcome is what a turn produced; on error or cancel, what it produced
// before.
type Outcome struct {
	// Output is the visible text of the turn: every output_text delta
	// emitted, in order.
	Output    string
	Reasoning string
	// Trace is the assistant and tool messages the turn added, ready to be
	// replayed to the model on the next turn. Every tool call in it has
	// its result.
	Trace []Message
	// Usage sums the usage of every model call of the turn, subagents
	// included; nil when no call reported any.
	Usage *Tokens
	// Last is the usage of the turn's last model call (its prompt and
	// completion are the session's context size).
	Last  *Tokens
	Model string // as the endpoint reported it
	Steps int
}

// turn is the state one loop shares with its tools; subagents get their own
// turn with depth+1 and the same usage sum.
type turn struct {
	agent   *Agent
	model   string
	effort  string
	purpose string
	depth   int
	usage   *usageSum
}

type usageSum struct {
	mu  sync.Mutex
	sum Tokens
	any bool
}

func (u *usageSum) add(t *Tokens) {
	if t == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.any = true
	u.sum.Prompt += t.Prompt
	u.sum.Completion += t.Completion
	u.sum.Cached += t.Cached
	if t.CostUSD != nil {
		c := *t.CostUSD
		if u.sum.CostUSD != nil {
			c += *u.sum.CostUSD
		}
		u.sum.CostUSD = &c
	}
}

func (u *usageSum) total() *Tokens {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.any {
		return nil
	}
	t := u.sum
	return &t
}

// Run executes one turn, emitting reasoning and text deltas and tool call
// events. When ctx ends it stops the model stream and running tools
// (subagents included) and returns the outcome so far with ctx.Err().
// Model failures are *harness.Error with a spec turn code.
func (a *Agent) Run(ctx context.Context, req Request, emit func(harness.Event) error) (Outcome, error) {
	t := &turn{agent: a, model: req.Model, effort: req.ReasoningEffort, purpose: req.Purpose, usage: &usageSum{}}
	out, err := a.loop(ctx, t, req.Messages, emit)
	out.Usage = t.usage.total()
	return out, err
}
