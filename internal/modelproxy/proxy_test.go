package modelproxy

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-dev/svc/internal/modeltest"
	"github.com/svc-dev/svc/internal/store"
)

type fixture struct {
	st       *store.Store
	proxy    *Proxy
	srv      *httptest.Server
	upstream *modeltest.Server
	token    string
}

func setup(t *testing.T, configured bool) fixture {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	st.CreateWorkspace(ctx, "ws1", "one")
	in := store.Instance{ID: "inst000001", WorkspaceID: "ws1", Status: "running", Template: "t", TemplateName: "t",
		TemplateScope: "workspace", CPU: 2, Memory: 4, Disk: 4, Type: "default", IdleTimeout: 900, Created: 1, Updated: 1}
	if err := st.CreateInstance(ctx, in, nil); err != nil {
		t.Fatal(err)
	}
	up, err := modeltest.Start(modeltest.Config{APIKey: "upstream-key", Models: []modeltest.Model{{ID: "m1"}, {ID: "m2"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	cfg := Config{Secret: []byte("s3cret"), Model: "m1"}
	if configured {
		cfg.Upstream, cfg.APIKey = up.URL, "upstream-key"
	}
	p := New(st, cfg)
	srv := httptest.NewServer(p.Handler())
	t.Cleanup(srv.Close)
	return fixture{st: st, proxy: p, srv: srv, upstream: up, token: p.Token(in.ID)}
}

func (f fixture) post(t *testing.T, token, body string, header ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", f.srv.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestTokens(t *testing.T) {
	f := setup(t, true)
	for _, tok := range []string{"", "svcm_inst000001_00", "svcm_inst000002_" + f.proxy.mac("inst000002"), strings.Replace(f.token, "svcm_", "xxxx_", 1)} {
		if resp := f.post(t, tok, `{"messages":[]}`); resp.StatusCode != 401 {
			t.Errorf("token %q: %d", tok, resp.StatusCode)
		}
	}
	if len(f.upstream.Requests()) != 0 {
		t.Fatal("a refused call reached the upstream")
	}
	if resp := f.post(t, f.token, `{"messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode != 200 {
		t.Fatalf("valid token: %d", resp.StatusCode)
	}
}

func TestStreamRelayedAndMetered(t *testing.T) {
	f := setup(t, true)
	f.upstream.Script(modeltest.Reply{Content: "hello there", Usage: &modeltest.Usage{PromptTokens: 11, CompletionTokens: 7}})
	// The client does not ask for usage; the proxy does, to meter.
	resp := f.post(t, f.token, `{"stream":true,"messages":[{"role":"user","content":"hi"}]}`, "X-Svc-Purpose", "title")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var text string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
		}
		json.Unmarshal([]byte(data), &c)
		for _, ch := range c.Choices {
			text += ch.Delta.Content
		}
	}
	if text != "hello there" {
		t.Fatalf("relayed %q", text)
	}
	reqs := f.upstream.Requests()
	if len(reqs) != 1 || reqs[0].Model != "m1" || reqs[0].Header.Get("X-Svc-Purpose") != "title" || reqs[0].StreamOptions == nil || !reqs[0].StreamOptions.IncludeUsage ||
		reqs[0].Header.Get("Authorization") != "Bearer upstream-key" {
		t.Fatalf("upstream saw %+v", reqs)
	}
	calls, _ := f.st.ModelCalls(context.Background(), "inst000001")
	if len(calls) != 1 || calls[0].InputTokens != 11 || calls[0].OutputTokens != 7 || calls[0].Model != "m1" ||
		calls[0].Purpose != "title" || calls[0].Status != 200 || calls[0].WorkspaceID != "ws1" {
		t.Fatalf("recorded %+v", calls)
	}
}

func TestJSONAndErrorsPassThrough(t *testing.T) {
	f := setup(t, true)
	f.upstream.Script(modeltest.Reply{Content: "ok", Usage: &modeltest.Usage{PromptTokens: 3, CompletionTokens: 2}},
		modeltest.Reply{Status: 429, ErrorType: "rate_limit_error", ErrorMessage: "slow down"})
	resp := f.post(t, f.token, `{"model":"m2","messages":[{"role":"user","content":"x"}]}`)
	var out struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != 200 || out.Choices[0].Message.Content != "ok" {
		t.Fatalf("json: %d %+v", resp.StatusCode, out)
	}
	resp = f.post(t, f.token, `{"messages":[{"role":"user","content":"x"}]}`)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 429 || !strings.Contains(string(b), "slow down") {
		t.Fatalf("429: %d %s", resp.StatusCode, b)
	}
	calls, _ := f.st.ModelCalls(context.Background(), "inst000001")
	if len(calls) != 2 || calls[0].Model != "m2" || calls[0].InputTokens != 3 || calls[1].Status != 429 {
		t.Fatalf("recorded %+v", calls)
	}
}

func TestUnconfigured(t *testing.T) {
	f := setup(t, false)
	resp := f.post(t, f.token, `{"messages":[]}`)
	var body struct {
		Error struct{ Code, Message, Hint string } `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != 503 || body.Error.Code != "model_upstream_unconfigured" || !strings.Contains(body.Error.Hint, "--model-upstream") {
		t.Fatalf("unconfigured: %d %+v", resp.StatusCode, body)
	}
}

func TestModels(t *testing.T) {
	f := setup(t, true)
	req, _ := http.NewRequest("GET", f.srv.URL+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer "+f.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct{ ID string } `json:"data"`
	}
	json.NewDecoder(resp.Body).Decode(&list)
	if len(list.Data) != 2 || list.Data[1].ID != "m2" {
		t.Fatalf("models %+v", list)
	}
}
