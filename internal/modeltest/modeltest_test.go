package modeltest

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, s *Server, body string, key string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", s.URL+"/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestStreamedToolCallReassembles(t *testing.T) {
	s, err := Start(Config{APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Script(Reply{Reasoning: "thinking hard", Content: "héllo wörld", ToolCalls: []ToolCall{{Name: "write_file", Arguments: `{"path":"/tmp/x","content":"ünïcode"}`}}, ChunkSize: 3})

	resp := post(t, s, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`, "k")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var reasoning, content, args, name, finish string
	var sawUsage, sawDone bool
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := strings.TrimPrefix(sc.Text(), "data: ")
		if line == "" || line == sc.Text() {
			continue
		}
		if line == "[DONE]" {
			sawDone = true
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					Reasoning string `json:"reasoning_content"`
					ToolCalls []struct {
						Function struct{ Name, Arguments string } `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				Finish *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *usageBody `json:"usage"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("chunk %q: %v", line, err)
		}
		if c.Usage != nil {
			sawUsage = true
		}
		for _, ch := range c.Choices {
			reasoning += ch.Delta.Reasoning
			content += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				name += tc.Function.Name
				args += tc.Function.Arguments
			}
			if ch.Finish != nil {
				finish = *ch.Finish
			}
		}
	}
	if reasoning != "thinking hard" || content != "héllo wörld" || name != "write_file" || args != `{"path":"/tmp/x","content":"ünïcode"}` {
		t.Fatalf("got reasoning=%q content=%q name=%q args=%q", reasoning, content, name, args)
	}
	if finish != "tool_calls" || !sawUsage || !sawDone {
		t.Fatalf("finish=%q usage=%v done=%v", finish, sawUsage, sawDone)
	}
	if reqs := s.Requests(); len(reqs) != 1 || reqs[0].LastUser() != "hi" || reqs[0].Model != "m" {
		t.Fatalf("recorded %+v", reqs)
	}
}

func TestErrorsAndAuth(t *testing.T) {
	s, err := Start(Config{APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if resp := post(t, s, `{"messages":[]}`, "wrong"); resp.StatusCode != 401 {
		t.Fatalf("wrong key: %d", resp.StatusCode)
	}
	s.Script(Reply{Status: 429, ErrorType: "rate_limit_error", ErrorMessage: "slow down"})
	resp := post(t, s, `{"messages":[{"role":"user","content":"x"}]}`, "k")
	var body struct {
		Error struct{ Message, Type string } `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != 429 || body.Error.Type != "rate_limit_error" || body.Error.Message != "slow down" {
		t.Fatalf("got %d %+v", resp.StatusCode, body)
	}
	// Queue empty: the fallback echoes the last user message.
	resp = post(t, s, `{"messages":[{"role":"user","content":"ping"}]}`, "k")
	var out struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	json.NewDecoder(resp.Body).Decode(&out)
	if len(out.Choices) != 1 || out.Choices[0].Message.Content != "echo: ping" {
		t.Fatalf("fallback: %+v", out)
	}
}

func TestMatchSkipsNonMatchingRequests(t *testing.T) {
	s, err := Start(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Script(Reply{Match: func(r Request) bool { return r.LastUser() == "b" }, Content: "for b"})
	get := func(in string) string {
		resp := post(t, s, `{"messages":[{"role":"user","content":"`+in+`"}]}`, "")
		var out struct {
			Choices []struct {
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
		}
		json.NewDecoder(resp.Body).Decode(&out)
		return out.Choices[0].Message.Content
	}
	if got := get("a"); got != "echo: a" {
		t.Fatalf("a: %q", got)
	}
	if got := get("b"); got != "for b" {
		t.Fatalf("b: %q", got)
	}
	if s.Pending() != 0 {
		t.Fatal("reply not consumed")
	}
}
