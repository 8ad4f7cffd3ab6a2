// Package builtin is what general-a and general-b share: configuration,
// the model client and catalog, the agent, the session store and running a
// turn against a stored conversation. The two harness packages keep only
// their differences (ids, titles, models, thinking levels, delete).
package builtin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/svc-dev/svc/internal/agent"
	"github.com/svc-dev/svc/internal/agent/session"
	"github.com/svc-dev/svc/internal/harness"
)

// DefaultWindow is the context window assumed for a model whose window
// neither the endpoint's model list nor the config gives.
const DefaultWindow = 128000

// Config sets up a built-in harness. Only the model endpoint is needed in
// production; everything else has a default.
type Config struct {
	// Home is the agent's home directory ("~" in tool paths); default $HOME.
	Home string
	// DataDir holds sessions.db; default Home/.svc-gateway/<harness id>.
	DataDir string
	// Workspace is the agent's working directory; default
	// Home/.svc-gateway/workspace (the gateway's default file location).
	Workspace string

	// ModelBaseURL, APIKey and Model come from SVC_MODEL_BASE_URL,
	// SVC_MODEL_API_KEY and SVC_MODEL. Without Model the first model the
	// endpoint lists is used.
	ModelBaseURL string
	APIKey       string
	Model        string
	// Provider names the one configured endpoint in model ids and in the
	// "provider" field (default "svc").
	Provider string
	// ContextWindow is the window of models the endpoint does not size
	// (default DefaultWindow).
	ContextWindow int64
	// ReasoningEffort is general-a's default effort and general-b's default
	// thinking level for new sessions; empty sends none.
	ReasoningEffort string
	// Instructions are appended to the system prompt.
	Instructions string

	// CatalogTTL is how long a /models answer (and so health) is trusted
	// (default 30 seconds).
	CatalogTTL time.Duration
	// AttachClip caps each attached file's content in the input (64 KiB).
	AttachClip int
	// Agent tunes the loop's limits (steps, shell timeout, output caps...);
	// its Client, Workspace and Home are set from the fields above.
	Agent agent.Config
}

// Base is an opened built-in harness.
type Base struct {
	ID      string
	Cfg     Config
	Store   *session.Store
	Client  *agent.Client
	Catalog *agent.Catalog
	Agent   *agent.Agent

	bgCtx    context.Context
	bgCancel context.CancelFunc
	bg       sync.WaitGroup
}

// Open applies defaults, creates the data and workspace directories and
// opens the session database.
func Open(id string, cfg Config) (*Base, error) {
	if cfg.Home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return nil, errors.New(id + ": no home directory: set HOME")
		}
		cfg.Home = h
	}
	if cfg.DataDir == "" {
		cfg.DataDir = filepath.Join(cfg.Home, ".svc-gateway", id)
	}
	if cfg.Workspace == "" {
		cfg.Workspace = filepath.Join(cfg.Home, ".svc-gateway", "workspace")
	}
	if cfg.Provider == "" {
		cfg.Provider = "svc"
	}
	if cfg.ContextWindow <= 0 {
		cfg.ContextWindow = DefaultWindow
	}
	if cfg.AttachClip <= 0 {
		cfg.AttachClip = 64 << 10
	}
	if err := os.MkdirAll(cfg.Workspace, 0o755); err != nil {
		return nil, err
	}
	store, err := session.Open(filepath.Join(cfg.DataDir, "sessions.db"))
	if err != nil {
		return nil, err
	}
	client := agent.NewClient(cfg.ModelBaseURL, cfg.APIKey)
	acfg := cfg.Agent
	acfg.Client, acfg.Workspace, acfg.Home = client, cfg.Workspace, cfg.Home
	b := &Base{ID: id, Cfg: cfg, Store: store, Client: client,
		Catalog: agent.NewCatalog(client, cfg.CatalogTTL), Agent: agent.New(acfg)}
	b.bgCtx, b.bgCancel = context.WithCancel(context.Background())
	return b, nil
}

// Go runs fn in the background (title generation); Close cancels and
// waits for it.
func (b *Base) Go(fn func(ctx context.Context)) {
	b.bg.Go(func() { fn(b.bgCtx) })
}

// Close stops background work and closes the database.
func (b *Base) Close() error {
	b.bgCancel()
	b.bg.Wait()
	return b.Store.Close()
}

// Wait blocks until background work finishes (tests and benchmarks).
func (b *Base) Wait() { b.bg.Wait() }

// NewSessionID is 32 lowercase hex characters.
func NewSessionID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Now is epoch milliseconds.
func Now() int64 { return time.Now().UnixMilli() }

// Window is the context window of model: listed by the endpoint, else the
// configured one.
func (b *Base) Window(ctx context.Context, model string) int64 {
	if w := b.Catalog.Window(ctx, model); w > 0 {
		return w
	}
	return b.Cfg.ContextWindow
}

// EndpointEffort maps a spec effort or thinking level to the values of the
// chat-completions reasoning_effort field (none, minimal, low, medium,
// high, xhigh): "off" is "none", and "max" and "ultra", which the protocol
// lacks, ask for its highest, "xhigh". Empty stays empty (field omitted).
func EndpointEffort(level string) string {
	switch level {
	case "off":
		return "none"
	case "max", "ultra":
		return "xhigh"
	}
	return level
}

// NoModel is the error of a turn that names no model when none is
// configured and the endpoint lists none: the endpoint's own failure when
// its model list failed (the managed model says how to configure it),
// else a hint to set SVC_MODEL.
func (b *Base) NoModel(ctx context.Context) error {
	if err := b.Catalog.Err(ctx); err != nil {
		return err
	}
	return &harness.Error{Code: "agent_error", Message: "no model configured and the endpoint lists none",
		Hint: "set " + agent.EnvModel + " to a model id the endpoint serves"}
}
