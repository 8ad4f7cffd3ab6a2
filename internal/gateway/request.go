package gateway

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// efforts are the reasoning_effort values of the spec. max and ultra are
// accepted: this gateway is newer than 0.10.0.
var efforts = []string{"none", "minimal", "low", "medium", "high", "xhigh", "max", "ultra"}

// turnRequest is a validated POST /v1/responses body. Fields the spec does
// not list are ignored (Postel), as is instance_id; null means omitted, and
// so does "" for session_id, reasoning_effort, agent and mode.
type turnRequest struct {
	Input           string
	Files           []string // as sent; resolved against the filesystem later
	SessionID       string
	Stream          bool
	Model           *string
	Provider        *string
	ReasoningEffort string
	Metadata        json.RawMessage // compact object or nil
	Agent           string
}

// parseTurnRequest decodes and validates body. It checks everything that
// does not need the filesystem or the registry; errors carry the spec's
// param, and none for malformed JSON.
func parseTurnRequest(body []byte, maxPairs, maxMetaBytes int) (turnRequest, error) {
	var req turnRequest
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return req, invalid("", "request body must be a JSON object")
	}
	present := func(name string) (json.RawMessage, bool) {
		raw, ok := fields[name]
		if !ok || string(raw) == "null" {
			return nil, false
		}
		return raw, true
	}
	str := func(name string) (string, bool, error) {
		raw, ok := present(name)
		if !ok {
			return "", false, nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", false, invalid(name, "%s must be a string", name)
		}
		return s, true, nil
	}

	input, ok, err := str("input")
	if err != nil {
		return req, err
	}
	if !ok || input == "" {
		return req, invalid("input", "input is required")
	}
	req.Input = input

	if raw, ok := present("files"); ok {
		if err := json.Unmarshal(raw, &req.Files); err != nil {
			return req, invalid("files", "files must be an array of paths")
		}
		for _, f := range req.Files {
			if f == "" {
				return req, invalid("files", "files must not contain an empty path")
			}
		}
	}

	if req.SessionID, _, err = str("session_id"); err != nil {
		return req, err
	}
	if req.SessionID != "" && !validSessionID(req.SessionID) {
		return req, invalid("session_id", "session_id must be 1 to 128 characters of A-Z a-z 0-9 . _ -")
	}

	if raw, ok := present("stream"); ok {
		if err := json.Unmarshal(raw, &req.Stream); err != nil {
			return req, invalid("stream", "stream must be a boolean")
		}
	}

	// model and provider are echoed as sent, so "" stays "" (not null).
	for _, f := range []struct {
		name string
		dst  **string
	}{{"model", &req.Model}, {"provider", &req.Provider}} {
		s, ok, err := str(f.name)
		if err != nil {
			return req, err
		}
		if ok {
			*f.dst = &s
		}
	}

	if req.ReasoningEffort, _, err = str("reasoning_effort"); err != nil {
		return req, err
	}
	if req.ReasoningEffort != "" && !slices.Contains(efforts, req.ReasoningEffort) {
		return req, invalid("reasoning_effort", "reasoning_effort must be one of %s", strings.Join(efforts, ", "))
	}

	if raw, ok := present("metadata"); ok {
		meta, err := checkMetadata(raw, maxPairs, maxMetaBytes)
		if err != nil {
			return req, err
		}
		req.Metadata = meta
	}

	if req.Agent, _, err = str("agent"); err != nil {
		return req, err
	}

	mode, _, err := str("mode")
	if err != nil {
		return req, err
	}
	switch mode {
	case "", "chat":
	case "goal":
		return req, invalid("mode", "mode goal is reserved; use chat")
	default:
		return req, invalid("mode", "mode must be chat")
	}
	return req, nil
}

// checkMetadata returns the metadata object compacted, for echoing
// verbatim (key order and values as sent).
func checkMetadata(raw json.RawMessage, maxPairs, maxBytes int) (json.RawMessage, error) {
	var pairs map[string]json.RawMessage
	if err := json.Unmarshal(raw, &pairs); err != nil || pairs == nil {
		return nil, invalid("metadata", "metadata must be an object")
	}
	if len(pairs) > maxPairs {
		return nil, invalid("metadata", "metadata has %d pairs; at most %d", len(pairs), maxPairs)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, invalid("metadata", "metadata must be an object")
	}
	if buf.Len() > maxBytes {
		return nil, invalid("metadata", "metadata is %d bytes serialized; at most %d", buf.Len(), maxBytes)
	}
	return buf.Bytes(), nil
}

// validSessionID accepts the 32-hex ids the gateway mints and the
// UUID-like ids other harnesses mint, but nothing a harness could mistake
// for a path.
func validSessionID(id string) bool {
	if len(id) == 0 || len(id) > 128 || !utf8.ValidString(id) || id == "." || id == ".." {
		return false
	}
	for _, c := range id {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}
