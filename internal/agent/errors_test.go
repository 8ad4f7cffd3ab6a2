package agent

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/modeltest"
)

func TestModelErrorsMapToTurnCodes(t *testing.T) {
	cases := []struct {
		name     string
		reply    modeltest.Reply
		code     string
		message  string // exact when set
		contains string
	}{
		{"unauthorized", modeltest.Reply{Status: 401, ErrorMessage: "Incorrect API key provided."}, "auth_error", "Incorrect API key provided.", ""},
		{"forbidden", modeltest.Reply{Status: 403, ErrorMessage: "model not allowed for this key"}, "auth_error", "model not allowed for this key", ""},
		{"rate limited", modeltest.Reply{Status: 429, ErrorType: "rate_limit_error", ErrorMessage: "slow down"}, "rate_limited", "slow down", ""},
		{"wallet empty", modeltest.Reply{Status: 402, ErrorType: "insufficient_balance", ErrorMessage: "wallet balance is $0.00; top up to continue"},
			"quota_exhausted", "wallet balance is $0.00; top up to continue", ""},
		{"budget spent", modeltest.Reply{Status: 402, ErrorMessage: "instance budget of $5.00 for this month is spent"},
			"quota_exhausted", "instance budget of $5.00 for this month is spent", ""},
		{"openai quota", modeltest.Reply{Status: 429, ErrorType: "insufficient_quota", ErrorCode: "insufficient_quota", ErrorMessage: "You exceeded your current quota"},
			"quota_exhausted", "You exceeded your current quota", ""},
		{"context code", modeltest.Reply{Status: 400, ErrorCode: "context_length_exceeded", ErrorMessage: "This model's maximum context length is 8192 tokens."},
			"context_length", "This model's maximum context length is 8192 tokens.", ""},
		{"context message", modeltest.Reply{Status: 400, ErrorMessage: "prompt is too long: 210000 tokens > 200000 maximum"},
			"context_length", "prompt is too long: 210000 tokens > 200000 maximum", ""},
		{"other bad request", modeltest.Reply{Status: 400, ErrorMessage: "tools[0] is invalid"}, "agent_error", "", "HTTP 400: tools[0] is invalid"},
		{"not found", modeltest.Reply{Status: 404, ErrorMessage: "model 'nope' not found"}, "agent_error", "", "model 'nope' not found"},
		{"server error", modeltest.Reply{Status: 500}, "agent_error", "", "HTTP 500"},
		{"unavailable", modeltest.Reply{Status: 503, ErrorMessage: "overloaded"}, "agent_error", "", "HTTP 503: overloaded"},
	}
	a, srv := setup(t, modeltest.Config{}, nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv.Script(c.reply)
			_, _, err := run(t, a, Request{Model: "m", Messages: user("x")})
			he, ok := harness.AsError(err)
			if !ok {
				t.Fatalf("err %v is not a harness error", err)
			}
			if he.Code != c.code {
				t.Fatalf("code %q, want %q (%v)", he.Code, c.code, he)
			}
			if c.message != "" && he.Message != c.message {
				t.Fatalf("message %q, want %q", he.Message, c.message)
			}
			if !strings.Contains(he.Message, c.contains) {
				t.Fatalf("message %q lacks %q", he.Message, c.contains)
			}
			if he.Hint == "" && c.code != "agent_error" {
				t.Fatalf("no hint for %s", c.code)
			}
		})
	}
}

func TestUnreachableAndUnconfiguredEndpoints(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	for _, c := range []struct {
		name, base, hint string
	}{
		{"refused", "http://" + addr + "/v1", EnvBaseURL},
		{"unset", "", EnvBaseURL},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := New(Config{Client: NewClient(c.base, ""), Workspace: t.TempDir()})
			_, _, err := run(t, a, Request{Model: "m", Messages: user("x")})
			he, ok := harness.AsError(err)
			if !ok || he.Code != "agent_error" || !strings.Contains(he.Hint, c.hint) {
				t.Fatalf("err %#v", err)
			}
		})
	}
}

func TestSilentStreamTimesOut(t *testing.T) {
	srv, err := modeltest.Start(modeltest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hold := make(chan struct{})
	defer close(hold)
	srv.Script(modeltest.Reply{Reasoning: "hmm", Content: "late", Wait: hold})
	c := NewClient(srv.URL, "")
	c.IdleTimeout = time.Second
	comp, err := c.Stream(context.Background(), Call{Model: "m", Messages: user("x")}, Handler{})
	he, ok := harness.AsError(err)
	if !ok || he.Code != "timeout" {
		t.Fatalf("err %v", err)
	}
	if comp.Reasoning != "hmm" {
		t.Fatalf("partial completion %+v", comp)
	}
}

func TestStreamErrorObjectAndJSONFallback(t *testing.T) {
	acc := newAccumulator(Handler{})
	err := readEvents(strings.NewReader("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}\n\n"+
		"data: {\"error\":{\"message\":\"maximum context length exceeded\",\"code\":\"context_length_exceeded\"}}\n\n"), acc.chunk)
	if he, ok := harness.AsError(err); !ok || he.Code != "context_length" || acc.out.Content != "par" {
		t.Fatalf("err %v content %q", err, acc.out.Content)
	}
	// A server that ignores stream:true answers with one JSON body.
	whole := newAccumulator(Handler{})
	body := `{"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"hi","reasoning_content":"r",
	"tool_calls":[{"id":"a","type":"function","function":{"name":"shell","arguments":"{}"}}]},"finish_reason":"tool_calls"}],
	"usage":{"prompt_tokens":5,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":3},"cost":0.25}}`
	if err := whole.whole([]byte(body)); err != nil {
		t.Fatal(err)
	}
	o := whole.out
	if o.Content != "hi" || o.Reasoning != "r" || len(o.ToolCalls) != 1 || o.ToolCalls[0].Function.Name != "shell" ||
		o.Usage.Prompt != 5 || o.Usage.Cached != 3 || *o.Usage.CostUSD != 0.25 || o.Model != "m1" || o.FinishReason != "tool_calls" {
		t.Fatalf("completion %+v", o)
	}
}

func TestParseAPIErrorShapes(t *testing.T) {
	for body, want := range map[string]string{
		`{"error":{"message":"bad key","type":"invalid_request_error"}}`: "bad key",
		`{"error":"model \"x\" not found, try pulling it first"}`:        `model "x" not found, try pulling it first`,
		`{"message":"upstream said no"}`:                                 "upstream said no",
		`{"detail":"Not Found"}`:                                         "Not Found",
		`<html>502 Bad Gateway</html>`:                                   "<html>502 Bad Gateway</html>",
	} {
		if got := parseAPIError([]byte(body)).Message; got != want {
			t.Errorf("%s: %q, want %q", body, got, want)
		}
	}
}
