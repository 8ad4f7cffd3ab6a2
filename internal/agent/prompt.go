package agent

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Persona sets up a turn's system prompt.
type Persona struct {
	Name      string // "general-a", ...
	Workspace string
	// Delegate asks the model to split work across subagents on its own
	// (general-b's "ultra" effort).
	Delegate bool
	// Extra is appended verbatim (operator instructions).
	Extra string
}

// SystemPrompt is the system message of a user turn.
func SystemPrompt(p Persona) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are %s, an autonomous agent running on the user's own Linux computer. ", p.Name)
	b.WriteString("You can run shell commands, read, write and edit files, list directories, fetch web pages " +
		"and delegate independent subtasks to subagents. Work step by step with the tools until the task is done, " +
		"then answer with a short summary of what you did and found. ")
	fmt.Fprintf(&b, "Your workspace (the shell's working directory, and the base of relative paths) is %s. ", p.Workspace)
	b.WriteString("When you need a decision from the user, end your turn with the question; their answer comes as the next message. ")
	fmt.Fprintf(&b, "Today is %s.", time.Now().UTC().Format("Monday 2 January 2006"))
	if p.Delegate {
		b.WriteString("\n\nSplit substantial work into independent parts and hand them to subagents with delegate_task " +
			"(several tasks in one call run concurrently), then combine their reports.")
	}
	if p.Extra != "" {
		b.WriteString("\n\n" + p.Extra)
	}
	return b.String()
}

// SubagentPrompt is the system message of a delegated task.
func SubagentPrompt(workspace string) string {
	return "You are a subagent: another agent handed you one task. Complete it with your tools " +
		"(shell, files, web fetch); the workspace is " + workspace + ". Your final message is your " +
		"report to that agent: state the result and the facts it needs, concisely. You cannot ask questions."
}

// AttachFiles appends the turn's files to the input: each path, then its
// content when it is text, clipped to limit bytes per file. The gateway
// checked that the paths exist; one that vanished since is noted.
func AttachFiles(input string, paths []string, limit int) string {
	if len(paths) == 0 {
		return input
	}
	var b strings.Builder
	b.WriteString(input)
	for _, p := range paths {
		fmt.Fprintf(&b, "\n\n[Attached file: %s]\n%s", p, fileContent(p, limit))
	}
	return b.String()
}

func fileContent(path string, limit int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(unreadable: %v)", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "(not a regular file)"
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return fmt.Sprintf("(unreadable: %v)", err)
	}
	if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
		return fmt.Sprintf("(binary file, %d bytes; use the tools to inspect it)", fi.Size())
	}
	if len(data) > limit {
		return "```\n" + clipString(string(data), limit) + "\n```\n" +
			fmt.Sprintf("(clipped: the file has %d bytes; read the rest with read_file)", fi.Size())
	}
	return "```\n" + string(data) + "\n```"
}
