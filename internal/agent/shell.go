package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/svc-dev/svc/internal/proc"
)

func shellTool() *tool {
	return &tool{
		def: FunctionDef{
			Name: "shell",
			Description: "Run a shell command (bash -lc) in the workspace and return its combined stdout and stderr " +
				"and exit code. Stdin is empty, so interactive commands fail. Long output keeps its start and end. " +
				"To leave a server running, start it in the background with its output redirected to a file.",
			Parameters: schema([]string{"command"}, map[string]map[string]any{
				"command":         prop("string", "the command line"),
				"timeout_seconds": prop("number", "kill the command after this many seconds (default 120, max 1800)"),
			}),
		},
		label: func(args map[string]any) string { return "Running: " + oneLine(str(args, "command"), 120) },
		run:   runShell,
	}
}

// shellPath prefers bash (login shell, so the user's PATH from profile
// files applies) and falls back to sh on minimal images.
func shellPath() (string, []string) {
	if p, err := exec.LookPath("bash"); err == nil {
		return p, []string{"-lc"}
	}
	return "/bin/sh", []string{"-c"}
}

func runShell(ctx context.Context, t *turn, args map[string]any) (string, error) {
	command, err := required(args, "command")
	if err != nil {
		return "", err
	}
	cfg := t.agent.cfg
	timeout := cfg.ShellTimeout
	if s, ok := num(args, "timeout_seconds"); ok && s > 0 {
		timeout = min(time.Duration(s*float64(time.Second)), cfg.ShellMaxTimeout)
	}
	if err := os.MkdirAll(cfg.Workspace, 0o755); err != nil {
		return "", err
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	path, flags := shellPath()
	cmd := exec.Command(path, append(flags, command)...)
	cmd.Dir = cfg.Workspace
	cmd.Env = shellEnv()
	out := proc.NewOutput(cfg.ShellOutputCap)
	cmd.Stdout, cmd.Stderr = out, out
	p, err := proc.Start(runCtx, cmd, cfg.Grace)
	if err != nil {
		return "", err
	}
	err = p.Wait()
	text := out.String()
	switch {
	case ctx.Err() != nil:
		return text, ctx.Err()
	case errors.Is(err, proc.ErrStopped):
		return text + fmt.Sprintf("\n[killed: timed out after %s]", timeout), fmt.Errorf("timed out after %s", timeout)
	}
	code := proc.ExitCode(err)
	if err != nil && code < 0 && !errors.Is(err, exec.ErrWaitDelay) {
		return text, err
	}
	if text == "" {
		text = "(no output)"
	}
	if out.Truncated() {
		text += fmt.Sprintf("\n[output truncated: %d bytes total]", out.Total())
	}
	if code != 0 {
		return text + fmt.Sprintf("\n[exit code %d]", code), fmt.Errorf("exit code %d", code)
	}
	return text + "\n[exit code 0]", nil
}

// shellEnv is the gateway's environment without the gateway's own
// credential and with pagers off (nobody can press q).
func shellEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "SVC_GATEWAY_TOKEN=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PAGER=cat", "GIT_PAGER=cat", "TERM=dumb")
}
