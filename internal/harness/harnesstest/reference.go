package harnesstest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/sse"
)

// Reference is a minimal harness: a streaming tool-calling loop on an
// OpenAI-compatible endpoint with two tools (shell, write_file) and
// sessions in memory. It checks this suite itself and drives the gateway
// benchmark until the built-in agents land; it is not an agent to ship.
type Reference struct {
	id      string
	baseURL string
	model   string
	home    string
	client  *http.Client

	mu       sync.Mutex
	sessions map[string]*refSession
	clock    int64
}

type refSession struct {
	title    *string
	messages []harness.Message
	order    int64 // orders the list without depending on timing
	active   int64 // epoch ms
}

// NewReference returns a Reference answering as harness id, calling model
// at baseURL (ending in /v1), with home as its working directory.
func NewReference(id, baseURL, model, home string) *Reference {
	return &Reference{id: id, baseURL: strings.TrimSuffix(baseURL, "/"), model: model, home: home,
		client: &http.Client{}, sessions: map[string]*refSession{}}
}

// ReferenceProfile is the suite's Profile for a Reference.
func ReferenceProfile() Profile {
	return Profile{
		ID: harness.GeneralA,
		New: func(t *testing.T, modelBaseURL, home string) harness.Harness {
			return NewReference(harness.GeneralA, modelBaseURL, "test-model", home)
		},
		ShellTool:     "shell",
		ShellArgs:     func(cmd string) string { return mustJSON(map[string]string{"command": cmd}) },
		WriteFileTool: "write_file",
		WriteFileArgs: func(path, content string) string {
			return mustJSON(map[string]string{"path": path, "content": content})
		},
		Renames:           true,
		MessageCount:      true,
		Preview:           true,
		ContextLengthCode: "context_length",
		ContextWindow:     128000,
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (h *Reference) ID() string { return h.id }

type chatMessage struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

var refTools = []any{
	map[string]any{"type": "function", "function": map[string]any{"name": "shell", "parameters": map[string]any{
		"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}}}},
	map[string]any{"type": "function", "function": map[string]any{"name": "write_file", "parameters": map[string]any{
		"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}, "content": map[string]any{"type": "string"}}}}},
}

func (h *Reference) Run(ctx context.Context, turn harness.Turn, emit func(harness.Event) error) (harness.Result, error) {
	h.mu.Lock()
	var msgs []chatMessage
	if s := h.sessions[turn.SessionID]; s != nil {
		for _, m := range s.messages {
			msgs = append(msgs, chatMessage{Role: m.Role, Content: m.Content})
		}
	}
	h.mu.Unlock()
	input := turn.Input
	if len(turn.Files) > 0 {
		input += "\n\nAttached files:\n" + strings.Join(turn.Files, "\n")
	}
	msgs = append(msgs, chatMessage{Role: "user", Content: input})
	model := h.model
	if turn.Model != "" {
		model = turn.Model
	}
	usage := &harness.Usage{Model: model}
	var out strings.Builder
	for step := 0; step < 16; step++ {
		reply, err := h.complete(ctx, model, turn.ReasoningEffort, msgs, usage, &out, emit)
		if err != nil {
			return harness.Result{OutputText: out.String(), Usage: usage}, err
		}
		msgs = append(msgs, reply)
		if len(reply.ToolCalls) == 0 {
			h.record(turn, input, out.String())
			return harness.Result{OutputText: out.String(), Usage: usage}, nil
		}
		for _, c := range reply.ToolCalls {
			result, err := h.tool(ctx, c, emit)
			if ctx.Err() != nil {
				return harness.Result{OutputText: out.String(), Usage: usage}, ctx.Err()
			}
			if err != nil {
				result = "error: " + err.Error()
			}
			msgs = append(msgs, chatMessage{Role: "tool", Content: result, ToolCallID: c.ID})
		}
	}
	return harness.Result{OutputText: out.String(), Usage: usage}, harness.Errorf("agent_error", "too many steps")
}

// complete runs one streamed chat completion, emitting its deltas.
func (h *Reference) complete(ctx context.Context, model, effort string, msgs []chatMessage, usage *harness.Usage, out *strings.Builder, emit func(harness.Event) error) (chatMessage, error) {
	body := map[string]any{"model": model, "messages": msgs, "stream": true, "tools": refTools,
		"stream_options": map[string]any{"include_usage": true}}
	if effort != "" {
		body["reasoning_effort"] = effort
	}
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, "POST", h.baseURL+"/chat/completions", bytes.NewReader(b))
	if err != nil {
		return chatMessage{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return chatMessage{}, ctx.Err()
		}
		return chatMessage{}, harness.Errorf("agent_error", "model unreachable: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return chatMessage{}, modelError(resp)
	}
	reply := chatMessage{Role: "assistant"}
	events := sse.NewReader(resp.Body)
	for {
		ev, err := events.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return reply, ctx.Err()
			}
			return reply, harness.Errorf("agent_error", "model stream: %v", err)
		}
		if string(ev.Data) == "[DONE]" {
			break
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					Reasoning string `json:"reasoning_content"`
					ToolCalls []struct {
						Index    int    `json:"index"`
						ID       string `json:"id"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
			Usage *struct {
				Prompt     int64 `json:"prompt_tokens"`
				Completion int64 `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(ev.Data, &chunk); err != nil {
			return reply, harness.Errorf("agent_error", "model chunk: %v", err)
		}
		if chunk.Usage != nil {
			usage.InputTokens += chunk.Usage.Prompt
			usage.OutputTokens += chunk.Usage.Completion
		}
		for _, c := range chunk.Choices {
			if c.Delta.Reasoning != "" {
				emit(harness.Event{Name: harness.ReasoningDelta, Data: map[string]any{"text": c.Delta.Reasoning}})
			}
			if c.Delta.Content != "" {
				reply.Content += c.Delta.Content
				out.WriteString(c.Delta.Content)
				emit(harness.Event{Name: harness.OutputTextDelta, Data: map[string]any{"text": c.Delta.Content}})
			}
			for _, tc := range c.Delta.ToolCalls {
				for len(reply.ToolCalls) <= tc.Index {
					reply.ToolCalls = append(reply.ToolCalls, toolCall{Type: "function"})
				}
				call := &reply.ToolCalls[tc.Index]
				if tc.ID != "" {
					call.ID = tc.ID
				}
				if tc.Function.Name != "" {
					call.Function.Name = tc.Function.Name
					emit(harness.Event{Name: harness.ToolCallGenerating, Data: map[string]any{"tool": call.Function.Name}})
				}
				call.Function.Arguments += tc.Function.Arguments
			}
		}
	}
	return reply, nil
}

// modelError maps a model HTTP error to the spec's turn codes.
func modelError(resp *http.Response) error {
	var body struct {
		Error struct {
			Message string `json:"message"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body)
	msg := body.Error.Message
	switch {
	case resp.StatusCode == 401 || resp.StatusCode == 403:
		return &harness.Error{Code: "auth_error", Message: msg, Hint: "check the model API key"}
	case resp.StatusCode == 402:
		return harness.Errorf("quota_exhausted", "%s", msg)
	case resp.StatusCode == 429:
		return harness.Errorf("rate_limited", "%s", msg)
	case body.Error.Code == "context_length_exceeded":
		return harness.Errorf("context_length", "%s", msg)
	}
	return harness.Errorf("agent_error", "model error %d: %s", resp.StatusCode, msg)
}

// tool runs one call, reporting it as started and completed or failed.
func (h *Reference) tool(ctx context.Context, c toolCall, emit func(harness.Event) error) (string, error) {
	var args map[string]string
	json.Unmarshal([]byte(c.Function.Arguments), &args)
	emit(harness.Event{Name: harness.ToolCallStarted, Data: map[string]any{"tool": c.Function.Name, "label": args["command"] + args["path"]}})
	start := time.Now()
	var out string
	var err error
	switch c.Function.Name {
	case "shell":
		out, err = h.shell(ctx, args["command"])
	case "write_file":
		path := args["path"]
		if !filepath.IsAbs(path) {
			path = filepath.Join(h.home, path)
		}
		if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			err = os.WriteFile(path, []byte(args["content"]), 0o644)
		}
		out = "written"
	default:
		err = fmt.Errorf("unknown tool %q", c.Function.Name)
	}
	if err != nil {
		emit(harness.Event{Name: harness.ToolCallFailed, Data: map[string]any{"tool": c.Function.Name, "error": err.Error()}})
		return "", err
	}
	emit(harness.Event{Name: harness.ToolCallCompleted, Data: map[string]any{"tool": c.Function.Name, "duration_ms": time.Since(start).Milliseconds()}})
	return out, nil
}

// shell runs command in its own process group, killed whole on cancel.
func (h *Reference) shell(ctx context.Context, command string) (string, error) {
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = h.home
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-ctx.Done():
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return out.String(), ctx.Err()
	}
}

func (h *Reference) record(turn harness.Turn, input, output string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sessions[turn.SessionID]
	if s == nil {
		s = &refSession{}
		h.sessions[turn.SessionID] = s
	}
	h.clock++
	now := time.Now().UnixMilli()
	s.order, s.active = h.clock, now
	n := len(s.messages)
	s.messages = append(s.messages,
		harness.Message{ID: fmt.Sprintf("m%d", n), SessionID: turn.SessionID, Role: "user", Content: input, CreatedAt: now},
		harness.Message{ID: fmt.Sprintf("m%d", n+1), SessionID: turn.SessionID, Role: "assistant", Content: output, CreatedAt: now})
}

func (h *Reference) Sessions(ctx context.Context) ([]harness.SessionRow, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var rows []harness.SessionRow
	for id, s := range h.sessions {
		n := int64(len(s.messages))
		preview := s.messages[0].Content
		active := s.active
		rows = append(rows, harness.SessionRow{ID: id, Title: s.title, LastActive: &active, MessageCount: &n, Preview: &preview})
	}
	slices.SortFunc(rows, func(a, b harness.SessionRow) int {
		return int(h.sessions[b.ID].order - h.sessions[a.ID].order)
	})
	return rows, nil
}

func (h *Reference) History(ctx context.Context, id string) ([]harness.Message, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.sessions[id]; s != nil {
		return slices.Clone(s.messages), nil
	}
	return nil, nil
}

func (h *Reference) Rename(ctx context.Context, id, title string) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for other, s := range h.sessions {
		if other != id && s.title != nil && *s.title == title {
			e := harness.Errorf("title_conflict", "title %q is used by another session", title)
			e.Param = "title"
			return false, e
		}
	}
	s := h.sessions[id]
	if s == nil {
		return false, nil
	}
	s.title = &title
	return true, nil
}

func (h *Reference) Delete(ctx context.Context, id string) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.sessions[id]
	delete(h.sessions, id)
	return ok, nil
}

func (h *Reference) Healthy(ctx context.Context) bool {
	_, err := h.Models(ctx)
	return err == nil
}

// Models reads the endpoint's catalog.
func (h *Reference) Models(ctx context.Context) ([]harness.Model, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", h.baseURL+"/models", nil)
	if err != nil {
		return nil, err
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, modelError(resp)
	}
	var list struct {
		Data []struct {
			ID            string `json:"id"`
			ContextWindow int64  `json:"context_window"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, err
	}
	var out []harness.Model
	for _, m := range list.Data {
		out = append(out, harness.Model{ID: m.ID, ContextWindow: m.ContextWindow, Default: m.ID == h.model})
	}
	return out, nil
}
