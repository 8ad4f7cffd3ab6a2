package terminal

import (
	"context"
	"encoding/json"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/coder/websocket"

	"github.com/svc-dev/svc/internal/webtools"
)

// maxMessage bounds one message from the page: a large paste arrives as
// one input message.
const maxMessage = 1 << 20

// control is a text message from the page.
type control struct {
	Type string `json:"type"`
	Cols int    `json:"cols"`
	Rows int    `json:"rows"`
}

// serveWS upgrades the request and runs one shell for the connection's
// lifetime. Once upgraded, failures are logged and end the connection.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) error {
	// The handshake is a GET, which cross-origin protection lets through;
	// a page elsewhere must not get a shell with the user's cookie.
	if !webtools.SameOrigin(r) {
		return webtools.Errorf(http.StatusForbidden, "cross-origin WebSocket refused")
	}
	if !s.begin() {
		return webtools.Errorf(http.StatusServiceUnavailable, "the terminal is shutting down")
	}
	defer s.live.Done()
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		InsecureSkipVerify: true, // the origin was checked above, proxy-aware
		CompressionMode:    websocket.CompressionDisabled,
	})
	if err != nil {
		return nil // Accept answered the client
	}
	defer conn.CloseNow()
	conn.SetReadLimit(maxMessage)

	cols, rows := size(r)
	sh, err := startShell(s.cfg, cols, rows)
	if err != nil {
		s.log.Error("terminal: cannot start the shell", "err", err)
		conn.Close(websocket.StatusInternalError, "cannot start the shell")
		return nil
	}
	s.log.Info("terminal: session started", "pid", sh.cmd.Process.Pid, "remote", r.RemoteAddr)
	code, reason := s.run(conn, sh)
	sh.stop(s.cfg.Grace)
	s.log.Info("terminal: session ended", "pid", sh.cmd.Process.Pid, "reason", reason)
	conn.Close(code, reason)
	// The gateway idles between uses in every instance; hand the
	// session's buffers back to the system now rather than whenever the
	// scavenger gets to them (about 1 MB of idle RSS, see bench).
	debug.FreeOSMemory()
	return nil
}

// run pumps bytes both ways until the client leaves, the shell's output
// ends or the server closes, and returns how to close the WebSocket.
func (s *Server) run(conn *websocket.Conn, sh *shell) (websocket.StatusCode, string) {
	clientGone := make(chan struct{})
	outputDone := make(chan struct{})
	go func() {
		defer close(clientGone)
		s.input(conn, sh)
	}()
	go func() {
		defer close(outputDone)
		s.output(conn, sh)
	}()
	var ping <-chan time.Time
	if s.cfg.PingInterval > 0 {
		t := time.NewTicker(s.cfg.PingInterval)
		defer t.Stop()
		ping = t.C
	}
	for {
		select {
		case <-clientGone:
			return websocket.StatusNormalClosure, "client left"
		case <-outputDone:
			return websocket.StatusNormalClosure, "exited"
		case <-sh.exited:
			// Let the last output (an exit message) reach the page; a
			// background job still holding the terminal is then ended.
			select {
			case <-outputDone:
			case <-clientGone:
			case <-time.After(500 * time.Millisecond):
			}
			return websocket.StatusNormalClosure, "exited"
		case <-s.ctx.Done():
			return websocket.StatusGoingAway, "server shutting down"
		case <-ping:
			ctx, cancel := context.WithTimeout(s.ctx, s.cfg.PingInterval)
			err := conn.Ping(ctx)
			cancel()
			if err != nil && s.ctx.Err() == nil {
				return websocket.StatusGoingAway, "client does not answer"
			}
		}
	}
}

// input copies the page's messages to the shell: bytes to the pty,
// resizes to the kernel. It returns when the client is gone.
func (s *Server) input(conn *websocket.Conn, sh *shell) {
	for {
		typ, data, err := conn.Read(context.Background())
		if err != nil {
			return
		}
		if typ == websocket.MessageBinary {
			if _, err := sh.pty.Write(data); err != nil {
				return
			}
			continue
		}
		var c control
		if err := json.Unmarshal(data, &c); err != nil {
			s.log.Debug("terminal: bad control message", "err", err)
			continue
		}
		if c.Type == "resize" && c.Cols > 0 && c.Rows > 0 && c.Cols <= 1000 && c.Rows <= 1000 {
			if err := sh.resize(uint16(c.Cols), uint16(c.Rows)); err != nil {
				s.log.Debug("terminal: resize", "err", err)
			}
		}
	}
}

// output copies the shell's output to the page until the pty has no more
// to give (every process holding it is gone) or the client stops taking
// it.
func (s *Server) output(conn *websocket.Conn, sh *shell) {
	buf := make([]byte, 32<<10)
	for {
		n, err := sh.pty.Read(buf)
		if n > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), s.cfg.WriteTimeout)
			werr := conn.Write(ctx, websocket.MessageBinary, buf[:n])
			cancel()
			if werr != nil {
				return
			}
		}
		if err != nil {
			return // EIO once no process holds the terminal, or closed
		}
	}
}
