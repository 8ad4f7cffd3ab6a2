package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// tool is one function the model can call. run returns the text handed
// back to the model; an error marks the call failed (the run continues and
// the model reads the error, or the text when there is one).
type tool struct {
	def   FunctionDef
	label func(args map[string]any) string
	run   func(ctx context.Context, t *turn, args map[string]any) (string, error)
	// nested tools are not offered to subagents (no recursive delegation).
	nested bool
}

// toolSet builds the tools of the agent, in the order they are offered.
func (a *Agent) toolSet() []*tool {
	return []*tool{shellTool(), readFileTool(), writeFileTool(), editFileTool(), listDirectoryTool(), webFetchTool(), delegateTool()}
}

func (a *Agent) defs(subagent bool) []ToolDef {
	var out []ToolDef
	for _, t := range a.tools {
		if subagent && t.nested {
			continue
		}
		out = append(out, ToolDef{Type: "function", Function: t.def})
	}
	return out
}

// schema builds a JSON-schema object from name -> {type, description}.
func schema(required []string, props map[string]map[string]any) map[string]any {
	return map[string]any{"type": "object", "properties": props, "required": required}
}

func prop(typ, desc string) map[string]any { return map[string]any{"type": typ, "description": desc} }

// Argument accessors: models send numbers as floats and sometimes as
// strings, so be lenient in what is accepted.

func str(args map[string]any, key string) string {
	switch v := args[key].(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

func num(args map[string]any, key string) (float64, bool) {
	switch v := args[key].(type) {
	case float64:
		return v, true
	case string:
		var f float64
		if _, err := fmt.Sscan(v, &f); err == nil {
			return f, true
		}
	}
	return 0, false
}

func required(args map[string]any, key string) (string, error) {
	s := str(args, key)
	if s == "" {
		return "", fmt.Errorf("missing required argument %q", key)
	}
	return s, nil
}

// decodeArgs parses a call's arguments; an empty string is an empty object.
func decodeArgs(raw string) (map[string]any, error) {
	if strings.TrimSpace(raw) == "" {
		return map[string]any{}, nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, fmt.Errorf("arguments are not a JSON object: %v", err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// resolve makes a tool path absolute: relative paths are under the
// workspace, "~" is the agent's home. Paths are not jailed: the instance is
// the user's own machine.
func (a *Agent) resolve(p string) string {
	switch {
	case p == "" || p == ".":
		return a.cfg.Workspace
	case p == "~":
		return a.cfg.Home
	case strings.HasPrefix(p, "~/"):
		return filepath.Join(a.cfg.Home, p[2:])
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	}
	return filepath.Join(a.cfg.Workspace, p)
}

// writeAtomic replaces path's content through a temp file and rename, so a
// cancelled write never leaves half a file. An existing file keeps its mode.
func writeAtomic(path string, data []byte) error {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target // write through a link, do not replace it
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
