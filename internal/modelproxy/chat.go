package modelproxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/store"
)

// maxRequest caps a chat request body (long conversations are large).
const maxRequest = 32 << 20

type usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

func (p *Proxy) chat(w http.ResponseWriter, r *http.Request) {
	in, err := p.instanceOf(r)
	if err != nil {
		p.denied(w, err)
		return
	}
	if !p.Configured() {
		p.unconfigured(w)
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxRequest+1))
	if err != nil {
		return
	}
	if len(raw) > maxRequest {
		writeError(w, http.StatusRequestEntityTooLarge, "request_too_large", "chat request over 32 MB", "")
		return
	}
	var req map[string]any
	if err := json.Unmarshal(raw, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_json", "request body is not a JSON object", "")
		return
	}
	model, _ := req["model"].(string)
	if model == "" || model == "default" {
		model = p.cfg.Model
		req["model"] = model
	}
	stream, _ := req["stream"].(bool)
	if stream {
		// Ask for the usage chunk so every streamed call can be metered.
		opts, _ := req["stream_options"].(map[string]any)
		if opts == nil {
			opts = map[string]any{}
		}
		opts["include_usage"] = true
		req["stream_options"] = opts
	}
	body, _ := json.Marshal(req)
	call := store.ModelCall{InstanceID: in.ID, WorkspaceID: in.WorkspaceID, Model: model, Purpose: r.Header.Get(harness.PurposeHeader)}
	defer func() { p.record(r.Context(), call) }()

	up, err := http.NewRequestWithContext(r.Context(), http.MethodPost, p.cfg.Upstream+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal_error", "cannot build the upstream request", "")
		return
	}
	up.Header.Set("Content-Type", "application/json")
	if call.Purpose != "" {
		// Passed on so an upstream (a scripted one in tests, a proxy that
		// meters) can tell side calls such as titles from turns.
		up.Header.Set(harness.PurposeHeader, call.Purpose)
	}
	if p.cfg.APIKey != "" {
		up.Header.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}
	resp, err := p.client.Do(up)
	if err != nil {
		if r.Context().Err() == nil {
			p.cfg.Log.Warn("model upstream unreachable", "err", err)
			writeError(w, http.StatusBadGateway, "upstream_unreachable", "the managed model's upstream did not answer", "")
		}
		return
	}
	defer resp.Body.Close()
	call.Status = resp.StatusCode
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		w.Write(b)
		var out struct {
			Model string `json:"model"`
			Usage *usage `json:"usage"`
		}
		if json.Unmarshal(b, &out) == nil && out.Usage != nil {
			call.InputTokens, call.OutputTokens = out.Usage.PromptTokens, out.Usage.CompletionTokens
		}
		return
	}
	p.relayStream(w, resp.Body, &call)
}

// relayStream copies an SSE body line by line, flushing each event, and
// picks the usage out of the chunks on the way.
func (p *Proxy) relayStream(w http.ResponseWriter, body io.Reader, call *store.ModelCall) {
	rc := http.NewResponseController(w)
	br := bufio.NewReaderSize(body, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			if _, werr := w.Write(line); werr != nil {
				return
			}
			if data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:")); ok && bytes.Contains(data, []byte(`"usage"`)) {
				var chunk struct {
					Usage *usage `json:"usage"`
				}
				if json.Unmarshal(bytes.TrimSpace(data), &chunk) == nil && chunk.Usage != nil {
					call.InputTokens, call.OutputTokens = chunk.Usage.PromptTokens, chunk.Usage.CompletionTokens
				}
			}
			if len(bytes.TrimSpace(line)) == 0 {
				rc.Flush() // end of an event
			}
		}
		if err == bufio.ErrBufferFull {
			continue // a long line: keep copying it
		}
		if err != nil {
			rc.Flush()
			return
		}
	}
}

func (p *Proxy) record(ctx context.Context, c store.ModelCall) {
	if err := p.st.RecordModelCall(context.WithoutCancel(ctx), c); err != nil {
		p.cfg.Log.Error("record model call", "instance", c.InstanceID, "err", err)
	}
}

func (p *Proxy) denied(w http.ResponseWriter, err error) {
	if err == errUnauthorized {
		writeError(w, http.StatusUnauthorized, "invalid_api_key", "unknown instance model token", "")
		return
	}
	p.cfg.Log.Error("model proxy", "err", err)
	writeError(w, http.StatusInternalServerError, "internal_error", "internal error", "")
}
