package agent

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

func pathLabel(verb string) func(map[string]any) string {
	return func(args map[string]any) string {
		p := str(args, "path")
		if p == "" {
			p = "."
		}
		return verb + " " + oneLine(p, 160)
	}
}

func readFileTool() *tool {
	return &tool{
		def: FunctionDef{
			Name: "read_file",
			Description: "Read a text file. Relative paths are in the workspace; ~ is the home directory. " +
				"offset (first line, 1-based) and limit (number of lines) read part of a large file.",
			Parameters: schema([]string{"path"}, map[string]map[string]any{
				"path":   prop("string", "file path"),
				"offset": prop("integer", "first line to read, 1-based"),
				"limit":  prop("integer", "number of lines to read"),
			}),
		},
		label: pathLabel("Reading"),
		run:   readFile,
	}
}

func readFile(ctx context.Context, t *turn, args map[string]any) (string, error) {
	p, err := required(args, "path")
	if err != nil {
		return "", err
	}
	path := t.agent.resolve(p)
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if fi.IsDir() {
		return "", fmt.Errorf("%s is a directory; use list_directory", path)
	}
	offset, hasOffset := num(args, "offset")
	limit, hasLimit := num(args, "limit")
	capBytes := t.agent.cfg.ReadMaxBytes
	// A line range may start past the cap, so ranged reads scan further.
	scan := int64(capBytes)
	if hasOffset || hasLimit {
		scan = 64 << 20
	}
	data, err := io.ReadAll(io.LimitReader(f, scan+1))
	if err != nil {
		return "", err
	}
	if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
		return "", fmt.Errorf("%s is a binary file (%d bytes)", path, fi.Size())
	}
	text := string(data[:min(len(data), int(scan))])
	if hasOffset || hasLimit {
		lines := strings.SplitAfter(text, "\n")
		start := max0(int(offset) - 1)
		if start > len(lines) {
			start = len(lines)
		}
		end := len(lines)
		if hasLimit && int(limit) >= 0 && start+int(limit) < end {
			end = start + int(limit)
		}
		text = strings.Join(lines[start:end], "")
	}
	if len(text) > capBytes {
		return clipString(text, capBytes) + fmt.Sprintf("\n[truncated: the file has %d bytes; read the rest with offset and limit]", fi.Size()), nil
	}
	if !hasOffset && !hasLimit && int64(len(data)) > scan {
		text += fmt.Sprintf("\n[truncated: the file has %d bytes; read the rest with offset and limit]", fi.Size())
	}
	return text, nil
}

func max0(n int) int {
	if n < 0 {
		return 0
	}
	return n
}

func writeFileTool() *tool {
	return &tool{
		def: FunctionDef{
			Name:        "write_file",
			Description: "Create or overwrite a file with the given content; missing parent directories are created.",
			Parameters: schema([]string{"path", "content"}, map[string]map[string]any{
				"path":    prop("string", "file path"),
				"content": prop("string", "the complete new content"),
			}),
		},
		label: pathLabel("Writing"),
		run: func(ctx context.Context, t *turn, args map[string]any) (string, error) {
			p, err := required(args, "path")
			if err != nil {
				return "", err
			}
			path := t.agent.resolve(p)
			content := str(args, "content")
			if err := writeAtomic(path, []byte(content)); err != nil {
				return "", err
			}
			return fmt.Sprintf("wrote %d bytes to %s", len(content), path), nil
		},
	}
}

func editFileTool() *tool {
	return &tool{
		def: FunctionDef{
			Name: "edit_file",
			Description: "Replace one exact occurrence of old_string with new_string in a file. old_string must " +
				"match exactly once (include surrounding lines to make it unique).",
			Parameters: schema([]string{"path", "old_string", "new_string"}, map[string]map[string]any{
				"path":       prop("string", "file path"),
				"old_string": prop("string", "exact text to replace"),
				"new_string": prop("string", "replacement text"),
			}),
		},
		label: pathLabel("Editing"),
		run:   editFile,
	}
}

func editFile(ctx context.Context, t *turn, args map[string]any) (string, error) {
	p, err := required(args, "path")
	if err != nil {
		return "", err
	}
	old, err := required(args, "old_string")
	if err != nil {
		return "", err
	}
	path := t.agent.resolve(p)
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	content := string(data)
	switch n := strings.Count(content, old); n {
	case 0:
		return "", fmt.Errorf("old_string not found in %s", path)
	case 1:
	default:
		return "", fmt.Errorf("old_string matches %d places in %s; include more surrounding text so it matches once", n, path)
	}
	updated := strings.Replace(content, old, str(args, "new_string"), 1)
	if err := writeAtomic(path, []byte(updated)); err != nil {
		return "", err
	}
	return fmt.Sprintf("edited %s", path), nil
}

// maxListEntries matches the gateway's directory listing cap.
const maxListEntries = 1000

func listDirectoryTool() *tool {
	return &tool{
		def: FunctionDef{
			Name:        "list_directory",
			Description: "List one directory level: subdirectories first (with a trailing /), then files with their sizes.",
			Parameters: schema(nil, map[string]map[string]any{
				"path": prop("string", "directory path (default: the workspace)"),
			}),
		},
		label: pathLabel("Listing"),
		run: func(ctx context.Context, t *turn, args map[string]any) (string, error) {
			path := t.agent.resolve(str(args, "path"))
			entries, err := os.ReadDir(path)
			if err != nil {
				return "", err
			}
			sort.SliceStable(entries, func(i, j int) bool {
				di, dj := entries[i].IsDir(), entries[j].IsDir()
				if di != dj {
					return di
				}
				return strings.ToLower(entries[i].Name()) < strings.ToLower(entries[j].Name())
			})
			var b strings.Builder
			fmt.Fprintf(&b, "%s:\n", path)
			for i, e := range entries {
				if i == maxListEntries {
					fmt.Fprintf(&b, "[... %d more entries]\n", len(entries)-i)
					break
				}
				switch {
				case e.IsDir():
					fmt.Fprintf(&b, "%s/\n", e.Name())
				case e.Type()&os.ModeSymlink != 0:
					target, _ := os.Readlink(path + "/" + e.Name())
					fmt.Fprintf(&b, "%s -> %s\n", e.Name(), target)
				default:
					size := int64(-1)
					if fi, err := e.Info(); err == nil {
						size = fi.Size()
					}
					fmt.Fprintf(&b, "%s (%d bytes)\n", e.Name(), size)
				}
			}
			if len(entries) == 0 {
				b.WriteString("(empty)\n")
			}
			return b.String(), nil
		},
	}
}
