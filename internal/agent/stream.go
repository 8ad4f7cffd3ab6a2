package agent

import (
	"encoding/json"

	"github.com/svc-dev/svc/internal/harness"
)

// maxToolCalls bounds the calls of one model response; the index comes from
// the network and must not size an allocation.
const maxToolCalls = 64

type toolCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type delta struct {
	Content          string          `json:"content"`
	ReasoningContent string          `json:"reasoning_content"` // vLLM, DeepSeek
	Reasoning        string          `json:"reasoning"`         // Ollama, OpenRouter
	ToolCalls        []toolCallDelta `json:"tool_calls"`
}

type usageBody struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	// Cost is reported by some gateways (OpenRouter, the managed model).
	Cost *float64 `json:"cost"`
}

type chunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Index        int     `json:"index"`
		Delta        *delta  `json:"delta"`
		Message      *delta  `json:"message"` // non-streaming bodies
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usageBody      `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// accumulator assembles a Completion from chunks and forwards deltas.
type accumulator struct {
	h     Handler
	out   Completion
	index map[int]int // tool call index -> position in out.ToolCalls
	named []bool      // whether ToolName was called for a position
}

func newAccumulator(h Handler) *accumulator {
	return &accumulator{h: h, index: map[int]int{}}
}

// chunk handles one SSE data payload.
func (a *accumulator) chunk(data []byte) error {
	var c chunk
	if err := json.Unmarshal(data, &c); err != nil {
		return harness.Errorf("agent_error", "model stream: bad chunk: %v", err)
	}
	return a.apply(&c)
}

// whole handles a non-streaming JSON body.
func (a *accumulator) whole(data []byte) error {
	return a.chunk(data)
}

func (a *accumulator) apply(c *chunk) error {
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return statusError(0, append(append([]byte(`{"error":`), c.Error...), '}'))
	}
	if c.Model != "" {
		a.out.Model = c.Model
	}
	if c.Usage != nil {
		t := &Tokens{Prompt: c.Usage.PromptTokens, Completion: c.Usage.CompletionTokens, CostUSD: c.Usage.Cost}
		if c.Usage.PromptTokensDetails != nil {
			t.Cached = c.Usage.PromptTokensDetails.CachedTokens
		}
		a.out.Usage = t
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // we never ask for n > 1
		}
		d := ch.Delta
		if d == nil {
			d = ch.Message
		}
		if d != nil {
			if err := a.delta(d); err != nil {
				return err
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			a.out.FinishReason = *ch.FinishReason
		}
	}
	return nil
}

func (a *accumulator) delta(d *delta) error {
	if r := d.ReasoningContent; r != "" || d.Reasoning != "" {
		if r == "" {
			r = d.Reasoning
		}
		a.out.Reasoning += r
		if a.h.Reasoning != nil {
			if err := a.h.Reasoning(r); err != nil {
				return err
			}
		}
	}
	if d.Content != "" {
		a.out.Content += d.Content
		if a.h.Content != nil {
			if err := a.h.Content(d.Content); err != nil {
				return err
			}
		}
	}
	for _, tc := range d.ToolCalls {
		pos, err := a.position(tc)
		if err != nil {
			return err
		}
		call := &a.out.ToolCalls[pos]
		if tc.ID != "" {
			call.ID = tc.ID
		}
		// Most servers send the name once; some repeat it in every chunk.
		if n := tc.Function.Name; n != "" && n != call.Function.Name {
			call.Function.Name += n
		}
		call.Function.Arguments += tc.Function.Arguments
		if !a.named[pos] && call.Function.Name != "" {
			a.named[pos] = true
			if a.h.ToolName != nil {
				if err := a.h.ToolName(call.Function.Name); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// position finds or adds the call a fragment belongs to. Fragments carry an
// index; servers that omit it start a new call with each new id.
func (a *accumulator) position(tc toolCallDelta) (int, error) {
	n := len(a.out.ToolCalls)
	if tc.Index != nil {
		if pos, ok := a.index[*tc.Index]; ok {
			return pos, nil
		}
	} else if n > 0 && (tc.ID == "" || tc.ID == a.out.ToolCalls[n-1].ID) {
		return n - 1, nil
	}
	if n >= maxToolCalls {
		return 0, harness.Errorf("agent_error", "model stream: more than %d tool calls in one response", maxToolCalls)
	}
	if tc.Index != nil {
		a.index[*tc.Index] = n
	}
	a.out.ToolCalls = append(a.out.ToolCalls, ToolCall{Type: "function"})
	a.named = append(a.named, false)
	return n, nil
}
