package terminal

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/svc-dev/svc/internal/gateway"
	"github.com/svc-dev/svc/internal/webtools"
)

const token = "test-token"

// start serves a terminal behind the same protection the gateway uses, on
// a real loopback listener.
func start(t *testing.T) (*Server, string, string) {
	t.Helper()
	home := t.TempDir()
	cfg := DefaultConfig(home, append(os.Environ(), "SVC_GATEWAY_TOKEN=leak", "PS1=$ "))
	cfg.Grace = 500 * time.Millisecond
	s := New(cfg, nil)
	srv := httptest.NewServer(webtools.Protect(token, s.Handler()))
	t.Cleanup(func() { s.Close(); srv.Close() })
	return s, srv.URL, home
}

// dial opens the terminal's WebSocket with the token.
func dial(t *testing.T, base, query string, header http.Header) *websocket.Conn {
	t.Helper()
	c, err := tryDial(base, query, header)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

func tryDial(base, query string, header http.Header) (*websocket.Conn, error) {
	if header == nil {
		header = http.Header{}
	}
	if header.Get(gateway.TokenHeader) == "" {
		header.Set(gateway.TokenHeader, token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws"+query, &websocket.DialOptions{HTTPHeader: header})
	if err != nil && resp != nil {
		return nil, &statusError{resp.StatusCode, err}
	}
	return c, err
}

type statusError struct {
	status int
	err    error
}

func (e *statusError) Error() string { return strconv.Itoa(e.status) + ": " + e.err.Error() }

// reader collects the terminal's output.
type reader struct {
	c   *websocket.Conn
	out bytes.Buffer
	err error
}

// until reads until the output matches re, and returns the submatches.
func (r *reader) until(t *testing.T, re string) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for {
		if loc := rx.FindStringSubmatchIndex(r.out.String()); loc != nil {
			text := r.out.String()
			var m []string
			for i := 0; i < len(loc); i += 2 {
				if loc[i] >= 0 {
					m = append(m, text[loc[i]:loc[i+1]])
				} else {
					m = append(m, "")
				}
			}
			// Keep what follows the match for the next wait.
			r.out.Reset()
			r.out.WriteString(text[loc[1]:])
			return m
		}
		typ, data, err := r.c.Read(ctx)
		if err != nil {
			r.err = err
			t.Fatalf("waiting for %q: %v; output so far:\n%s", re, err, r.out.String())
		}
		if typ == websocket.MessageBinary {
			r.out.Write(data)
		}
	}
}

func send(t *testing.T, c *websocket.Conn, typ websocket.MessageType, s string) {
	t.Helper()
	if err := c.Write(context.Background(), typ, []byte(s)); err != nil {
		t.Fatalf("send %q: %v", s, err)
	}
}

func TestRoundTrip(t *testing.T) {
	_, base, home := start(t)
	c := dial(t, base, "", nil)
	r := &reader{c: c}
	// The arithmetic proves the shell ran the line: the echo of the typed
	// input does not contain 42.
	send(t, c, websocket.MessageBinary, "echo hi-$((6*7)) \"$PWD\" ${SVC_GATEWAY_TOKEN:-none}\r")
	m := r.until(t, `hi-42 (\S+) (\S+)`)
	if m[1] != home {
		t.Errorf("working directory %q, want the home %q", m[1], home)
	}
	if m[2] != "none" {
		t.Errorf("the shell sees SVC_GATEWAY_TOKEN=%q", m[2])
	}
	// A login shell: bash says so.
	send(t, c, websocket.MessageBinary, "shopt -q login_shell && echo LOGIN-$((1+1))\r")
	r.until(t, `LOGIN-2`)
}

func TestResize(t *testing.T) {
	_, base, _ := start(t)
	c := dial(t, base, "?cols=100&rows=40", nil)
	r := &reader{c: c}
	send(t, c, websocket.MessageBinary, "stty size\r")
	r.until(t, `\D40 100\r?\n`)
	send(t, c, websocket.MessageText, `{"type":"resize","cols":132,"rows":50}`)
	// A malformed control message is ignored, the session goes on.
	send(t, c, websocket.MessageText, `{"type":`)
	send(t, c, websocket.MessageBinary, "stty size\r")
	r.until(t, `\D50 132\r?\n`)
}

func TestDisconnectKillsShell(t *testing.T) {
	_, base, _ := start(t)
	c := dial(t, base, "", nil)
	r := &reader{c: c}
	send(t, c, websocket.MessageBinary, "echo SHELL=$$; sleep 1000 & echo JOB=$!\r")
	shellPid, _ := strconv.Atoi(r.until(t, `SHELL=(\d+)`)[1])
	jobPid, _ := strconv.Atoi(r.until(t, `JOB=(\d+)`)[1])
	// And one in the foreground.
	send(t, c, websocket.MessageBinary, "sleep 999\r")
	time.Sleep(200 * time.Millisecond)
	for _, pid := range []int{shellPid, jobPid} {
		if !alive(pid) {
			t.Fatalf("pid %d is not running before the disconnect", pid)
		}
	}
	members := sessionMembers(shellPid)
	if len(members) < 3 {
		t.Fatalf("session %d has %v, want the shell and two sleeps", shellPid, members)
	}
	c.CloseNow() // the client vanishes without a close handshake
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range members {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("pid %d survived the disconnect", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func TestShellExitClosesSocket(t *testing.T) {
	_, base, _ := start(t)
	c := dial(t, base, "", nil)
	send(t, c, websocket.MessageBinary, "exit 3\r")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, _, err := c.Read(ctx)
		if err == nil {
			continue
		}
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.StatusNormalClosure || ce.Reason != "exited" {
			t.Fatalf("after exit: %v, want close 1000 \"exited\"", err)
		}
		return
	}
}

func TestCloseEndsSessions(t *testing.T) {
	s, base, _ := start(t)
	c := dial(t, base, "", nil)
	r := &reader{c: c}
	send(t, c, websocket.MessageBinary, "echo SHELL=$$\r")
	pid, _ := strconv.Atoi(r.until(t, `SHELL=(\d+)`)[1])
	go func() {
		// Read so the close handshake completes.
		for {
			if _, _, err := c.Read(context.Background()); err != nil {
				return
			}
		}
	}()
	s.Close()
	if alive(pid) {
		t.Fatalf("shell %d alive after Close", pid)
	}
	if _, err := tryDial(base, "", nil); err == nil {
		t.Fatal("a new session was accepted after Close")
	}
}

func TestAccessRules(t *testing.T) {
	_, base, _ := start(t)
	cases := []struct {
		name   string
		header http.Header
		status int
	}{
		{"no token", http.Header{}, 401},
		{"wrong token", http.Header{gateway.TokenHeader: {"nope"}}, 401},
		{"cross-site page", http.Header{gateway.TokenHeader: {token}, "Sec-Fetch-Site": {"cross-site"}}, 403},
		{"other origin", http.Header{gateway.TokenHeader: {token}, "Origin": {"http://evil.example"}}, 403},
	}
	for _, tc := range cases {
		_, err := rawDial(base, tc.header)
		var se *statusError
		if !errors.As(err, &se) || se.status != tc.status {
			t.Errorf("%s: %v, want HTTP %d", tc.name, err, tc.status)
		}
	}
	// The same origin is welcome, also behind a proxy that rewrote Host.
	u := strings.TrimPrefix(base, "http://")
	dial(t, base, "", http.Header{"Origin": {"http://" + u}, "Sec-Fetch-Site": {"same-origin"}})
	dial(t, base, "", http.Header{"Origin": {"http://i1-7681.apps.example"}, "X-Forwarded-Host": {"i1-7681.apps.example"}})

	// The page itself needs the token too.
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("page without token: %d", resp.StatusCode)
	}
}

// rawDial dials with exactly the given headers.
func rawDial(base string, h http.Header) (*websocket.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws", &websocket.DialOptions{HTTPHeader: h})
	if err != nil && resp != nil {
		return nil, &statusError{resp.StatusCode, err}
	}
	if c != nil {
		c.CloseNow()
	}
	return c, err
}

func alive(pid int) bool {
	_, state, ok := procSession(pid)
	return ok && state != 'Z' && syscall.Kill(pid, 0) == nil
}
