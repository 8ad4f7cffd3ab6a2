package terminal

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// shell is one login shell on its own pty: a new session whose leader is
// the shell, so everything it starts can be found and ended with it.
type shell struct {
	cmd    *exec.Cmd
	pty    *os.File // the master; Close interrupts a blocked Read
	exited chan struct{}
}

// startShell runs the login shell of cfg in cfg.Home at the given size.
func startShell(cfg Config, cols, rows uint16) (*shell, error) {
	path := cfg.Shell
	if path == "" {
		path = userShell(os.Getuid(), os.Getenv("SHELL"))
	}
	cmd := exec.Command(path)
	// A leading "-" in argv[0] is how login(1) tells a shell it is a login
	// shell: it reads the profile, as an SSH session would.
	cmd.Args = []string{"-" + filepath.Base(path)}
	cmd.Dir = cfg.Home
	cmd.Env = shellEnv(cfg.Env, cfg.Home, path)
	master, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: cols, Rows: rows})
	if err != nil {
		return nil, err
	}
	f, err := pollable(master)
	if err != nil {
		killSession(cmd.Process.Pid, 0)
		cmd.Wait()
		return nil, err
	}
	sh := &shell{cmd: cmd, pty: f, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(sh.exited)
	}()
	return sh, nil
}

// pollable returns the pty master as a non-blocking file in Go's poller.
// pty hands it back in blocking mode, where a Read stuck on a terminal that
// a stray process keeps open would hold a thread and the descriptor forever;
// in the poller, Close ends that Read.
func pollable(master *os.File) (*os.File, error) {
	defer master.Close()
	fd, err := unix.Dup(int(master.Fd()))
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	unix.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), "/dev/ptmx"), nil
}

// resize sets the terminal size; the kernel signals SIGWINCH to the
// foreground job. It goes through SyscallConn so the file stays
// non-blocking (Fd would make it blocking again).
func (s *shell) resize(cols, rows uint16) error {
	rc, err := s.pty.SyscallConn()
	if err != nil {
		return err
	}
	var ierr error
	err = rc.Control(func(fd uintptr) {
		ierr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Col: cols, Row: rows})
	})
	if err != nil {
		return err
	}
	return ierr
}

// stop ends the session: hang-up first, as a closed terminal window does,
// so shells save their history and programs clean up; after grace,
// SIGKILL for whatever is left. It returns once the shell is reaped.
func (s *shell) stop(grace time.Duration) {
	killSession(s.cmd.Process.Pid, grace)
	s.pty.Close()
	<-s.exited
}

// killSession signals every process of session sid (the shell and all it
// started, background jobs included; processes that left the session with
// setsid, as daemons do, are not its to end).
func killSession(sid int, grace time.Duration) {
	for _, pid := range sessionMembers(sid) {
		syscall.Kill(pid, syscall.SIGHUP)
		// A stopped job acts on SIGHUP only once continued.
		syscall.Kill(pid, syscall.SIGCONT)
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) && len(sessionMembers(sid)) > 0 {
		time.Sleep(20 * time.Millisecond)
	}
	for _, pid := range sessionMembers(sid) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// sessionMembers lists the live (not zombie) processes of session sid,
// read from /proc.
func sessionMembers(sid int) []int {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if s, state, ok := procSession(pid); ok && s == sid && state != 'Z' && state != 'X' {
			pids = append(pids, pid)
		}
	}
	return pids
}

// procSession reads the session id and state of pid from /proc/pid/stat,
// whose second field (the command) may itself contain spaces and ")".
func procSession(pid int) (sid int, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, 0, false
	}
	// After ")": state ppid pgrp session ...
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 4 || len(f[0]) != 1 {
		return 0, 0, false
	}
	sid, err = strconv.Atoi(f[3])
	return sid, f[0][0], err == nil
}

// userShell is the login shell of uid from /etc/passwd, else $SHELL, else
// the first of bash and sh that exists. nologin and false are skipped:
// they would end every session at once.
func userShell(uid int, envShell string) string {
	candidates := []string{passwdShell("/etc/passwd", uid), envShell, "/bin/bash", "/bin/sh"}
	for _, c := range candidates {
		if c == "" || strings.HasSuffix(c, "/nologin") || strings.HasSuffix(c, "/false") {
			continue
		}
		if fi, err := os.Stat(c); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return c
		}
	}
	return "/bin/sh"
}

// passwdShell reads the shell field of uid's line in a passwd file.
func passwdShell(file string, uid int) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) == 7 && fields[2] == strconv.Itoa(uid) {
			return fields[6]
		}
	}
	return ""
}

// shellEnv is env without the gateway's credential (the terminal's user
// has no use for it and a shell leaks environment easily), with the
// variables a terminal session is expected to have set for this one.
func shellEnv(env []string, home, shellPath string) []string {
	set := map[string]string{
		"TERM":      "xterm-256color",
		"COLORTERM": "truecolor",
		"HOME":      home,
		"SHELL":     shellPath,
	}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, override := set[k]; override || k == "SVC_GATEWAY_TOKEN" {
			continue
		}
		out = append(out, kv)
	}
	for _, k := range []string{"TERM", "COLORTERM", "HOME", "SHELL"} {
		out = append(out, k+"="+set[k])
	}
	return out
}
