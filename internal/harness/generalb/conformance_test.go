package generalb_test

import (
	"encoding/json"
	"testing"

	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/harness/builtin"
	"github.com/svc-dev/svc/internal/harness/generalb"
	"github.com/svc-dev/svc/internal/harness/harnesstest"
)

func args(kv ...string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// TestConformance runs the suite every harness passes, over HTTP through
// the real gateway, against general-b.
func TestConformance(t *testing.T) {
	harnesstest.Run(t, harnesstest.Profile{
		ID: harness.GeneralB,
		New: func(t *testing.T, modelBaseURL, home string) harness.Harness {
			h, err := generalb.New(builtin.Config{Home: home, ModelBaseURL: modelBaseURL, Model: "test-model"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.Close() })
			return h
		},
		ShellTool:         "shell",
		ShellArgs:         func(cmd string) string { return args("command", cmd) },
		WriteFileTool:     "write_file",
		WriteFileArgs:     func(path, content string) string { return args("path", path, "content", content) },
		Renames:           true,
		StopCommands:      []string{"stop", "exit"},
		ContextLengthCode: "context_length",
		ContextWindow:     128000,
	})
}
