package harnesstest

import (
	"encoding/json"
	"testing"

	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/harness/builtin"
)

// Builtin is the profile of a harness on the built-in agent loop: opened
// from a builtin.Config on the scripted model, closed when the test ends,
// driven through the loop's shell and write_file tools. Callers set what
// their harness does differently (titles, stop commands, ...).
func Builtin[H interface {
	harness.Harness
	Close() error
}](id string, open func(builtin.Config) (H, error)) Profile {
	return Profile{
		ID: id,
		New: func(t *testing.T, modelBaseURL, home string) harness.Harness {
			h, err := open(builtin.Config{Home: home, ModelBaseURL: modelBaseURL, Model: "test-model"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.Close() })
			return h
		},
		ShellTool:     "shell",
		ShellArgs:     func(cmd string) string { return jsonArgs("command", cmd) },
		WriteFileTool: "write_file",
		WriteFileArgs: func(path, content string) string { return jsonArgs("path", path, "content", content) },
		ContextWindow: 128000,
	}
}

// jsonArgs is a tool call's arguments: a JSON object of string pairs.
func jsonArgs(kv ...string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}
