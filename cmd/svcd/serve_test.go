package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The first start prints the key, then how to reach the API and how to
// create an instance and chat with it.
func TestGreet(t *testing.T) {
	var b strings.Builder
	greet(&b, "http://localhost:7070", "sk_live_abc", ".svc")
	out := b.String()
	for _, want := range []string{
		"svc is running at http://localhost:7070",
		"sk_live_abc",
		"curl -H \"Authorization: Bearer $(cat .svc/api-key)\" http://localhost:7070/v1/templates",
		"export SVC_URL=http://localhost:7070 SVC_API_KEY=$(cat .svc/api-key)",
		"instances create --template svc-general-small",
		"chat ID \"hello\"",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("greeting lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	greet(&b, "http://localhost:7070", "", ".svc")
	if strings.Contains(b.String(), "API key (shown once") {
		t.Errorf("a later start printed the key banner:\n%s", b.String())
	}
}

func TestRelative(t *testing.T) {
	wd, _ := os.Getwd()
	for in, want := range map[string]string{
		filepath.Join(wd, "bin", "svc"): filepath.Join("bin", "svc"),
		".svc/api-key":                  ".svc/api-key",
		"/elsewhere/api-key":            "/elsewhere/api-key",
	} {
		if got := relative(in); got != want {
			t.Errorf("relative(%q) = %q, want %q", in, got, want)
		}
	}
}
