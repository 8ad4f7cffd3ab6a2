package builtin

import (
	"strings"
	"testing"
)

func TestEnvConfig(t *testing.T) {
	env := map[string]string{
		"HOME": "/home/user", "SVC_MODEL_BASE_URL": "http://10.0.0.1:7070/model/v1", "SVC_MODEL_API_KEY": "tok",
		"SVC_MODEL": "gpt-x", "SVC_MODEL_CONTEXT_WINDOW": "200000", "SVC_REASONING_EFFORT": "low",
	}
	cfg, err := EnvConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Home != "/home/user" || cfg.ModelBaseURL != env["SVC_MODEL_BASE_URL"] || cfg.APIKey != "tok" || cfg.Model != "gpt-x" ||
		cfg.ContextWindow != 200000 || cfg.ReasoningEffort != "low" || cfg.Provider != "" {
		t.Fatalf("%+v", cfg)
	}
	for k, v := range map[string]string{"SVC_MODEL_CONTEXT_WINDOW": "big", "SVC_REASONING_EFFORT": "extreme"} {
		bad := map[string]string{k: v}
		if _, err := EnvConfig(func(k string) string { return bad[k] }); err == nil || !strings.Contains(err.Error(), k) {
			t.Fatalf("%s=%s: %v", k, v, err)
		}
	}
}

func TestOpenDefaultsUnderHome(t *testing.T) {
	home := t.TempDir()
	b, err := Open("general-a", Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Cfg.DataDir != home+"/.svc-gateway/general-a" || b.Cfg.Workspace != home+"/.svc-gateway/workspace" ||
		b.Cfg.Provider != "svc" || b.Cfg.ContextWindow != DefaultWindow || b.Agent.Workspace() != b.Cfg.Workspace {
		t.Fatalf("%+v", b.Cfg)
	}
	if id := NewSessionID(); len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" || id == NewSessionID() {
		t.Fatalf("id %q", id)
	}
}

func TestEndpointEffort(t *testing.T) {
	for in, want := range map[string]string{"": "", "off": "none", "none": "none", "minimal": "minimal", "low": "low",
		"medium": "medium", "high": "high", "xhigh": "xhigh", "max": "xhigh", "ultra": "xhigh"} {
		if got := EndpointEffort(in); got != want {
			t.Errorf("%q -> %q, want %q", in, got, want)
		}
	}
}
