package gateway

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The parsers that face the network never panic, reject with a 400
// validation_error, and accept only what the rules allow. The seeds run as
// ordinary tests; go test -fuzz=FuzzX explores further.

func wantValidation(t *testing.T, err error) {
	t.Helper()
	var ge *Error
	if !errors.As(err, &ge) || ge.Status != 400 || ge.Code != "validation_error" {
		t.Fatalf("error %v is not a 400 validation_error", err)
	}
}

func FuzzTurnRequest(f *testing.F) {
	for _, seed := range []string{
		`{"input":"hi"}`,
		`{"input":"hi","stream":true,"session_id":"0123456789abcdef0123456789abcdef","model":"openai/gpt","provider":"p"}`,
		`{"input":"x","reasoning_effort":"ultra","metadata":{"a":"b","c":{"d":[1,2]}},"agent":"general-b","mode":"chat"}`,
		`{"input":"x","files":["/tmp/a","~/b"],"instance_id":42,"unknown":null}`,
		`{"input":"x","mode":"goal"}`,
		`{"input":"x","metadata":[]}`,
		`{"input":null}`,
		`{"input":"x","input":""}`,
		`{"input":"\u0000\ud800"}`,
		`[]`, `null`, `"x"`, `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseTurnRequest(body, 16, 64<<10)
		if err != nil {
			wantValidation(t, err)
			return
		}
		if req.Input == "" {
			t.Fatal("accepted an empty input")
		}
		if req.ReasoningEffort != "" && !slices.Contains(efforts, req.ReasoningEffort) {
			t.Fatalf("accepted effort %q", req.ReasoningEffort)
		}
		if req.SessionID != "" && !validSessionID(req.SessionID) {
			t.Fatalf("accepted session id %q", req.SessionID)
		}
		if slices.Contains(req.Files, "") {
			t.Fatal("accepted an empty file path")
		}
		if req.Metadata != nil {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(req.Metadata, &m); err != nil || len(m) > 16 || len(req.Metadata) > 64<<10 {
				t.Fatalf("accepted metadata %q", req.Metadata)
			}
		}
	})
}

func FuzzRenameRequest(f *testing.F) {
	for _, seed := range []string{`{"title":"Plans"}`, `{"title":"  "}`, `{"title":1}`, `{}`, `{"title":"a","x":[]}`, `null`, `{`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseRenameRequest(body)
		if err != nil {
			wantValidation(t, err)
			return
		}
		if req.Title == "" || req.Title != strings.TrimSpace(req.Title) {
			t.Fatalf("accepted title %q", req.Title)
		}
	})
}

func FuzzMoveRequest(f *testing.F) {
	for _, seed := range []string{`{"from":"/a","to":"/b"}`, `{"from":"","to":"/b"}`, `{"from":"/a"}`, `{"from":1,"to":"/b"}`, `[]`, `{`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseMoveRequest(body)
		if err != nil {
			wantValidation(t, err)
			return
		}
		if req.From == "" || req.To == "" {
			t.Fatalf("accepted %+v", req)
		}
	})
}

func FuzzResolvePath(f *testing.F) {
	for _, seed := range []string{"/", "~", "~/", "~/a/../../..", "/a//b/./c/", "relative", "~user/x", "/a\x00b", "", "../etc/passwd", "/ünï/cödé"} {
		f.Add(seed)
	}
	s := &Server{cfg: Config{Home: "/home/user"}}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := s.resolvePath("path", p)
		if err != nil {
			wantValidation(t, err)
			return
		}
		if !filepath.IsAbs(got) || filepath.Clean(got) != got || strings.ContainsRune(got, 0) {
			t.Fatalf("resolvePath(%q) = %q", p, got)
		}
		switch {
		case p == "~" || strings.HasPrefix(p, "~/"):
			// ~ expands against the home; ".." may leave it (not jailed).
			if want := filepath.Clean("/home/user/" + strings.TrimPrefix(p[1:], "/")); got != want {
				t.Fatalf("resolvePath(%q) = %q, want %q", p, got, want)
			}
		case got != filepath.Clean(p):
			t.Fatalf("resolvePath(%q) = %q", p, got)
		}
	})
}

func FuzzArchiveName(f *testing.F) {
	for _, seed := range []string{"project", "My Project (v2)!", "日本", "..", " ", "a\x00b"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, base string) {
		name := archiveName(base)
		if name == "" || strings.Trim(name, ". ") == "" {
			t.Fatalf("archiveName(%q) = %q", base, name)
		}
		for _, c := range name {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._- ", c)) {
				t.Fatalf("archiveName(%q) = %q has %q", base, name, c)
			}
		}
	})
}
