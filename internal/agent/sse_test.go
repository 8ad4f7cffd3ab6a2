package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-dev/svc/internal/harness"
)

func collect(t testing.TB, in string) ([]string, error) {
	var got []string
	err := readEvents(strings.NewReader(in), func(d []byte) error {
		got = append(got, string(d))
		return nil
	})
	return got, err
}

func TestReadEvents(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []string
	}{
		{"basic", "data: a\n\ndata: b\n\n", []string{"a", "b"}},
		{"crlf and cr", "data: a\r\n\r\ndata: b\r\rdata:c\n\n", []string{"a", "b", "c"}},
		{"multi-line data", "data: a\ndata: b\n\n", []string{"a\nb"}},
		{"comments, names and ids ignored", ": keepalive\nevent: x\nid: 3\ndata: a\n\n", []string{"a"}},
		{"done stops", "data: a\n\ndata: [DONE]\n\ndata: b\n\n", []string{"a"}},
		{"no final blank line", "data: a\n\ndata: b", []string{"a", "b"}},
		{"event without data is dropped", "event: ping\n\ndata: a\n\n", []string{"a"}},
		{"empty data is an event", "data:\n\n", []string{""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := collect(t, c.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadEventsStopsOnHandlerError(t *testing.T) {
	boom := errors.New("boom")
	n := 0
	err := readEvents(strings.NewReader("data: a\n\ndata: b\n\n"), func([]byte) error { n++; return boom })
	if err != boom || n != 1 {
		t.Fatalf("err %v after %d events", err, n)
	}
}

func TestToolCallFragmentsByIndex(t *testing.T) {
	var names []string
	acc := newAccumulator(Handler{ToolName: func(n string) error { names = append(names, n); return nil }})
	chunks := []string{
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"shell","arguments":""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"read_file","arguments":"{\"pa"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\":\"ls\"}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"th\":\"x\"}"}}]}}]}`,
		// Servers without indexes: a new id starts a call, no id continues the last.
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"c","function":{"name":"list_directory","arguments":"{"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"list_directory","arguments":"}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":4}}`,
	}
	for _, c := range chunks {
		if err := acc.chunk([]byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	want := []ToolCall{
		{ID: "a", Type: "function", Function: FunctionCall{"shell", `{"command":"ls"}`}},
		{ID: "b", Type: "function", Function: FunctionCall{"read_file", `{"path":"x"}`}},
		{ID: "c", Type: "function", Function: FunctionCall{"list_directory", `{}`}},
	}
	if diff := cmp.Diff(want, acc.out.ToolCalls); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"shell", "read_file", "list_directory"}, names); diff != "" {
		t.Fatalf("names (-want +got):\n%s", diff)
	}
	if acc.out.FinishReason != "tool_calls" || acc.out.Usage.Prompt != 9 {
		t.Fatalf("%+v", acc.out)
	}
}

func TestReasoningFieldVariants(t *testing.T) {
	acc := newAccumulator(Handler{})
	for _, c := range []string{
		`{"choices":[{"index":0,"delta":{"reasoning_content":"a"}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning":"b"}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning_content":"c","reasoning":"c"}}]}`, // some send both
		`{"choices":[{"index":0,"delta":{"content":null}}]}`,
	} {
		if err := acc.chunk([]byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	if acc.out.Reasoning != "abc" || acc.out.Content != "" {
		t.Fatalf("%+v", acc.out)
	}
}

// encode writes events the way a server might, with the given line ending.
func encode(events []string, eol string) string {
	var b strings.Builder
	for _, e := range events {
		for _, line := range strings.Split(e, "\n") {
			b.WriteString("data: " + line + eol)
		}
		b.WriteString(eol)
	}
	return b.String()
}

func FuzzReadEvents(f *testing.F) {
	f.Add("a", "b\nc", uint8(0))
	f.Add(`{"choices":[]}`, "", uint8(1))
	f.Add("x\r", "[DONE]", uint8(2))
	f.Fuzz(func(t *testing.T, a, b string, mode uint8) {
		eol := []string{"\n", "\r\n", "\r"}[mode%3]
		// Round trip: payloads without line breaks or the sentinel come back
		// exactly, whatever the line ending.
		var events []string
		for _, e := range []string{a, b} {
			if !strings.ContainsAny(e, "\r\n") && e != "[DONE]" {
				events = append(events, e)
			}
		}
		got, err := collect(t, encode(events, eol))
		if err != nil {
			t.Fatal(err)
		}
		if len(events) == 0 {
			events = nil
		}
		if diff := cmp.Diff(events, got); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
		// Arbitrary bytes never panic and never yield more data than input.
		raw := a + eol + b
		total := 0
		readEvents(strings.NewReader(raw), func(d []byte) error { total += len(d); return nil })
		if total > len(raw) {
			t.Fatalf("%d bytes of data from %d bytes of input", total, len(raw))
		}
	})
}

// FuzzStream feeds arbitrary bytes to the whole stream parser: it must not
// panic, must bound tool calls, and must fail only with turn errors.
func FuzzStream(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\",\"tool_calls\":[{\"index\":3,\"function\":{\"name\":\"x\"}}]}}]}\n\n"))
	f.Add([]byte("data: {\"error\":{\"message\":\"m\",\"code\":429}}\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":99999999999}]}}]}\n\n"))
	f.Add([]byte(": ping\r\n\r\ndata: [DONE]\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var text bytes.Buffer
		acc := newAccumulator(Handler{Content: func(s string) error { text.WriteString(s); return nil }})
		err := readEvents(bytes.NewReader(data), acc.chunk)
		if err != nil {
			if _, ok := harness.AsError(err); !ok && err != io.ErrUnexpectedEOF {
				t.Fatalf("non-turn error %T %v", err, err)
			}
		}
		if len(acc.out.ToolCalls) > maxToolCalls {
			t.Fatalf("%d tool calls", len(acc.out.ToolCalls))
		}
		if text.String() != acc.out.Content {
			t.Fatal("handler saw different text than the completion holds")
		}
		if _, err := json.Marshal(acc.out); err != nil {
			t.Fatal(err)
		}
	})
}
