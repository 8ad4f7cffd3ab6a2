package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/svc-dev/svc/internal/gateway"
	"github.com/svc-dev/svc/internal/harness/builtin"
)

// run is the whole program: flags and environment to a Config and a
// harness registry, then serve until ctx ends.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fl.SetOutput(stderr)
	listen := fl.String("listen", "", "address to listen on (default :$SVC_GATEWAY_PORT, else :3737)")
	home := fl.String("home", "", "the agent's home, ~ in file paths (default $HOME)")
	workspace := fl.String("workspace", "", "default directory of file listings (default $SVC_GATEWAY_WORKSPACE, else ~/.svc-gateway/workspace)")
	showVersion := fl.Bool("version", false, "print the version and exit")
	if err := fl.Parse(args[1:]); err != nil {
		return err
	}
	if *showVersion {
		fmt.Fprintln(stdout, "svc-gateway", gateway.Version)
		return nil
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))

	cfg := gateway.DefaultConfig()
	cfg.Token = getenv("SVC_GATEWAY_TOKEN")
	cfg.Home = first(*home, getenv("HOME"), cfg.Home)
	cfg.Workspace = first(*workspace, getenv("SVC_GATEWAY_WORKSPACE"), cfg.Workspace)
	ws := cfg.Workspace
	if strings.HasPrefix(ws, "~/") {
		ws = filepath.Join(cfg.Home, ws[2:])
	}
	if err := os.MkdirAll(ws, 0o755); err != nil {
		log.Warn("cannot create the workspace", "path", ws, "err", err)
	}

	env, err := builtin.EnvConfig(getenv)
	if err != nil {
		return err
	}
	env.Home, env.Workspace = cfg.Home, ws
	reg, err := registry(getenv("SVC_AGENT_TYPE"), getenv("SVC_HARNESSES"), env, log)
	if err != nil {
		return err
	}
	defer closeHarnesses(reg)
	gw, err := gateway.New(cfg, reg, log)
	if err != nil {
		return err
	}
	defer gw.Close()

	addr := *listen
	if addr == "" {
		addr = ":" + first(getenv("SVC_GATEWAY_PORT"), "3737")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if cfg.Token == "" {
		log.Warn("SVC_GATEWAY_TOKEN is not set: serving loopback clients only")
	}
	log.Info("svc-gateway listening", "addr", ln.Addr().String(), "version", gateway.Version, "default", reg.Default, "harnesses", len(reg.Harnesses))
	srv := &http.Server{
		Handler:           gw.Handler(),
		ReadHeaderTimeout: 30 * time.Second,
		// No write timeout: turns and downloads have no time limit.
		IdleTimeout: 5 * time.Minute,
		ErrorLog:    slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Running turns are cancelled by gw.Close; streams end with them.
	go gw.Close()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

func first(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
