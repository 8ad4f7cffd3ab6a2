package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/svc-dev/svc/internal/gateway"
	"github.com/svc-dev/svc/internal/webtools"
	"github.com/svc-dev/svc/internal/webtools/dashboard"
	"github.com/svc-dev/svc/internal/webtools/filebrowser"
	"github.com/svc-dev/svc/internal/webtools/terminal"
)

// desktopPath opens Debian's noVNC client, connected and sized to the
// window, on the desktop's port.
const desktopPath = "/vnc.html?autoconnect=true&resize=remote"

// toolFlags are the web tools' settings: each listener is off unless its
// port is given (flag, else environment).
type toolFlags struct {
	terminal, files, dashboard, desktop *string
}

func addToolFlags(fl *flag.FlagSet) toolFlags {
	return toolFlags{
		terminal:  fl.String("terminal-port", "", "serve the web terminal on this port or address (default $SVC_TERMINAL_PORT; off when empty)"),
		files:     fl.String("files-port", "", "serve the web file browser on this port or address (default $SVC_FILES_PORT; off when empty)"),
		dashboard: fl.String("dashboard-port", "", "serve the instance dashboard on this port or address (default $SVC_DASHBOARD_PORT; off when empty)"),
		desktop:   fl.String("desktop-port", "", "the desktop's port the dashboard links to (default $SVC_DESKTOP_PORT, else 6080; 0 for none)"),
	}
}

// service is one listener of the gateway process.
type service struct {
	name    string
	ln      net.Listener
	handler http.Handler
	close   func() // after the server stopped; nil when nothing to do
}

// webTools opens the listeners of the web tools that are turned on. Each
// sits behind the gateway's token check. The dashboard links to the
// others at the ports they really got.
func webTools(tf toolFlags, getenv func(string) string, cfg gateway.Config, gw *gateway.Server, log *slog.Logger) (_ []service, err error) {
	var out []service
	defer func() {
		if err != nil {
			for _, s := range out {
				s.ln.Close()
			}
		}
	}()
	// open listens for one tool when it is turned on; build makes its
	// handler (and what to close after) only then.
	open := func(name, flagValue, env string, build func() (http.Handler, func())) (int, error) {
		addr, err := listenAddr(first(flagValue, getenv(env)))
		if err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		if addr == "" {
			return 0, nil
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		h, closer := build()
		out = append(out, service{name: name, ln: ln, handler: webtools.Protect(cfg.Token, h), close: closer})
		return ln.Addr().(*net.TCPAddr).Port, nil
	}

	var tools []dashboard.Tool
	desktop, err := port(first(*tf.desktop, getenv("SVC_DESKTOP_PORT"), "6080"))
	if err != nil {
		return nil, fmt.Errorf("desktop port: %w", err)
	}
	if desktop != 0 {
		tools = append(tools, dashboard.Tool{Name: "Desktop", Port: desktop, Path: desktopPath})
	}

	p, err := open("terminal", *tf.terminal, "SVC_TERMINAL_PORT", func() (http.Handler, func()) {
		// The shell inherits the gateway's environment (minus its token),
		// as an SSH session inherits the system's.
		term := terminal.New(terminal.DefaultConfig(cfg.Home, os.Environ()), log)
		return term.Handler(), func() { term.Close() }
	})
	if err != nil {
		return nil, err
	}
	if p != 0 {
		tools = append(tools, dashboard.Tool{Name: "Terminal", Port: p})
	}
	p, err = open("files", *tf.files, "SVC_FILES_PORT", func() (http.Handler, func()) {
		return filebrowser.Handler(gw.FilesHandler()), nil
	})
	if err != nil {
		return nil, err
	}
	if p != 0 {
		tools = append(tools, dashboard.Tool{Name: "Files", Port: p})
	}
	_, err = open("dashboard", *tf.dashboard, "SVC_DASHBOARD_PORT", func() (http.Handler, func()) {
		return dashboard.Handler(dashboard.Config{
			InstanceID:  getenv("SVC_INSTANCE_ID"),
			InstanceURL: getenv("SVC_INSTANCE_URL"),
			Version:     gateway.Version,
			Home:        cfg.Home,
			Tools:       tools,
			Health:      gw.Health,
		}, log), nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// listenAddr reads a tool's setting: a port ("7681") listens on every
// interface, an address ("127.0.0.1:7681") as given, empty is off.
func listenAddr(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" || strings.Contains(v, ":") {
		return v, nil
	}
	p, err := port(v)
	if err != nil || p == 0 {
		return "", fmt.Errorf("invalid port %q", v)
	}
	return ":" + v, nil
}

func port(v string) (int, error) {
	p, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || p < 0 || p > 65535 {
		return 0, fmt.Errorf("invalid port %q", v)
	}
	return p, nil
}
