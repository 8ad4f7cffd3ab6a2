package modeltest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.APIKey == "" || r.Header.Get("Authorization") == "Bearer "+s.cfg.APIKey {
		return true
	}
	writeError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "Incorrect API key provided.")
	return false
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	type entry struct {
		ID            string `json:"id"`
		Object        string `json:"object"`
		OwnedBy       string `json:"owned_by"`
		ContextWindow int64  `json:"context_window,omitempty"`
	}
	out := struct {
		Object string  `json:"object"`
		Data   []entry `json:"data"`
	}{Object: "list"}
	for _, m := range s.cfg.Models {
		out.Data = append(out.Data, entry{ID: m.ID, Object: "model", OwnedBy: "modeltest", ContextWindow: m.ContextWindow})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	var req Request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_json", err.Error())
		return
	}
	req.Header = r.Header.Clone()
	reply := s.next(req)
	if reply.Status != 0 && reply.Status != http.StatusOK {
		writeError(w, reply.Status, reply.ErrorType, reply.ErrorCode, reply.ErrorMessage)
		return
	}
	model := req.Model
	if model == "" {
		model = s.cfg.Models[0].ID
	}
	usage := reply.usage(req)
	if !req.Stream {
		if !wait(r, reply.Wait) {
			return
		}
		writeJSONReply(w, model, reply, usage)
		return
	}
	streamReply(w, r, model, reply, usage, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
}

func wait(r *http.Request, ch <-chan struct{}) bool {
	if ch == nil {
		return true
	}
	select {
	case <-ch:
		return true
	case <-r.Context().Done():
		return false
	}
}

type usageBody struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

// usage counts about four bytes a token unless the reply overrides it.
func (rep Reply) usage(req Request) usageBody {
	if rep.Usage != nil {
		return usageBody{rep.Usage.PromptTokens, rep.Usage.CompletionTokens, rep.Usage.PromptTokens + rep.Usage.CompletionTokens}
	}
	in := 0
	for _, m := range req.Messages {
		in += len(m.Content)
	}
	out := len(rep.Content) + len(rep.Reasoning)
	for _, c := range rep.ToolCalls {
		out += len(c.Name) + len(c.Arguments)
	}
	u := usageBody{PromptTokens: int64(in/4 + 1), CompletionTokens: int64(out/4 + 1)}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

func (rep Reply) finishReason() string {
	if len(rep.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

func callID(c ToolCall, i int) string {
	if c.ID != "" {
		return c.ID
	}
	return fmt.Sprintf("call_%d", i+1)
}

func writeJSONReply(w http.ResponseWriter, model string, rep Reply, u usageBody) {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	msg := map[string]any{"role": "assistant", "content": rep.Content}
	if rep.Reasoning != "" {
		msg["reasoning_content"] = rep.Reasoning
	}
	if len(rep.ToolCalls) > 0 {
		var calls []call
		for i, c := range rep.ToolCalls {
			calls = append(calls, call{callID(c, i), "function", fn{c.Name, c.Arguments}})
		}
		msg["tool_calls"] = calls
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-scripted", "object": "chat.completion", "created": time.Now().Unix(), "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": rep.finishReason()}},
		"usage":   u,
	})
}

func streamReply(w http.ResponseWriter, r *http.Request, model string, rep Reply, u usageBody, includeUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	created := time.Now().Unix()
	send := func(delta map[string]any, finish *string, usage *usageBody) bool {
		chunk := map[string]any{"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": created, "model": model}
		if delta != nil || finish != nil {
			chunk["choices"] = []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}
		} else {
			chunk["choices"] = []any{}
		}
		if usage != nil {
			chunk["usage"] = usage
		}
		b, _ := json.Marshal(chunk)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return r.Context().Err() == nil
	}
	pause := func() bool {
		if rep.ChunkDelay <= 0 {
			return r.Context().Err() == nil
		}
		select {
		case <-time.After(rep.ChunkDelay):
			return true
		case <-r.Context().Done():
			return false
		}
	}
	size := rep.ChunkSize
	if size <= 0 {
		size = 8
	}
	if !send(map[string]any{"role": "assistant", "content": ""}, nil, nil) {
		return
	}
	for _, part := range chunks(rep.Reasoning, size) {
		if !pause() || !send(map[string]any{"reasoning_content": part}, nil, nil) {
			return
		}
	}
	if !wait(r, rep.Wait) {
		return
	}
	for _, part := range chunks(rep.Content, size) {
		if !pause() || !send(map[string]any{"content": part}, nil, nil) {
			return
		}
	}
	for i, c := range rep.ToolCalls {
		head := map[string]any{"index": i, "id": callID(c, i), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}
		if !send(map[string]any{"tool_calls": []any{head}}, nil, nil) {
			return
		}
		for _, part := range chunks(c.Arguments, size) {
			frag := map[string]any{"index": i, "function": map[string]any{"arguments": part}}
			if !pause() || !send(map[string]any{"tool_calls": []any{frag}}, nil, nil) {
				return
			}
		}
	}
	finish := rep.finishReason()
	if !send(map[string]any{}, &finish, nil) {
		return
	}
	if includeUsage && !send(nil, nil, &u) {
		return
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// chunks splits s into pieces of at most size bytes without cutting a UTF-8
// sequence.
func chunks(s string, size int) []string {
	var out []string
	for len(s) > 0 {
		n := size
		if n >= len(s) {
			out = append(out, s)
			break
		}
		for n > 0 && !utf8Start(s[n]) {
			n--
		}
		if n == 0 {
			n = size
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	if typ == "" {
		typ = "api_error"
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	var c any
	if code != "" {
		c = code
	}
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": c}})
}
