package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/svc-dev/svc/internal/auth"
	"github.com/svc-dev/svc/internal/server"
)

func serveCmd(getenv func(string) string, stdout, stderr io.Writer) *cobra.Command {
	cfg := server.Config{}
	var logLevel string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run every role of svcd in one process with the embedded defaults",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkCommon(&cfg, logLevel, stderr); err != nil {
				return err
			}
			cfg.Failpoint = failpoints(getenv("SVC_FAILPOINTS"))
			ctx := cmd.Context()
			srv, err := server.Start(ctx, cfg)
			if err != nil {
				return err
			}
			defer srv.Close()
			greet(stdout, srv.URL, srv.Key, cfg.DataDir)
			<-ctx.Done()
			fmt.Fprintln(stdout, "svcd: shutting down (instances keep running)")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.DataDir, "data", envOr(getenv, "SVC_DATA", "./.svc"), "data directory (env SVC_DATA)")
	f.StringVar(&cfg.Listen, "listen", envOr(getenv, "SVC_LISTEN", "127.0.0.1:7070"), "API and edge address (env SVC_LISTEN)")
	f.StringVar(&cfg.RegistryListen, "registry-listen", envOr(getenv, "SVC_REGISTRY_LISTEN", "127.0.0.1:7071"), "private registry address, loopback only (env SVC_REGISTRY_LISTEN)")
	f.StringVar(&cfg.AppsDomain, "apps-domain", envOr(getenv, "SVC_APPS_DOMAIN", "localhost"), "domain of instance URLs (env SVC_APPS_DOMAIN)")
	f.StringVar(&cfg.Network, "network", envOr(getenv, "SVC_NETWORK", "svc"), "Docker network of instances")
	f.StringVar(&cfg.ModelUpstream, "model-upstream", getenv("SVC_MODEL_UPSTREAM"), "OpenAI-compatible base URL (ending in /v1) of the managed model's upstream (env SVC_MODEL_UPSTREAM)")
	f.StringVar(&cfg.ModelAPIKey, "model-api-key", getenv("SVC_MODEL_API_KEY"), "API key for the model upstream (env SVC_MODEL_API_KEY)")
	f.StringVar(&cfg.Model, "model", getenv("SVC_MODEL"), "default model of the managed model (env SVC_MODEL)")
	f.IntVar(&cfg.ModelPort, "model-port", 7072, "port of the managed model on the instance network's host address")
	f.StringVar(&logLevel, "log-level", envOr(getenv, "SVC_LOG_LEVEL", "info"), "debug, info, warn or error")
	f.IntVar(&cfg.MinIdleTimeout, "min-idle-timeout", 300, "floor of idle_timeout_seconds; lower it for tests only")
	f.MarkHidden("min-idle-timeout")
	tlsFlags(f, &cfg, getenv)
	f.DurationVar(&cfg.WakeTimeout, "wake-timeout", 3*time.Minute, "how long the edge holds a request while its instance wakes")
	f.DurationVar(&cfg.IdleCheckEvery, "idle-check-every", 10*time.Second, "period of the idle watcher; shorten it for tests only")
	f.MarkHidden("idle-check-every")
	return cmd
}

// checkCommon validates what serve and edge share and sets the logger.
func checkCommon(cfg *server.Config, logLevel string, stderr io.Writer) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		return fmt.Errorf("--tls-cert and --tls-key go together")
	}
	cfg.Log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	return nil
}

// tlsFlags are shared by serve and edge.
func tlsFlags(f *pflag.FlagSet, cfg *server.Config, getenv func(string) string) {
	f.StringVar(&cfg.TLSCert, "tls-cert", envOr(getenv, "SVC_TLS_CERT", ""), "certificate (PEM) for HTTPS and HTTP/2 on the listener; with --tls-key (env SVC_TLS_CERT)")
	f.StringVar(&cfg.TLSKey, "tls-key", envOr(getenv, "SVC_TLS_KEY", ""), "private key (PEM) of --tls-cert (env SVC_TLS_KEY)")
}

// edgeCmd runs the edge role alone.
func edgeCmd(getenv func(string) string, stdout, stderr io.Writer) *cobra.Command {
	cfg := server.Config{}
	var logLevel string
	cmd := &cobra.Command{
		Use:   "edge",
		Short: "Run the edge alone (instance URLs, public ports, wake) next to a svcd serve on the same data directory",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkCommon(&cfg, logLevel, stderr); err != nil {
				return err
			}
			ctx := cmd.Context()
			srv, err := server.StartEdge(ctx, cfg)
			if err != nil {
				return err
			}
			defer srv.Close()
			fmt.Fprintf(stdout, "svc edge is serving instance URLs on %s\n", srv.URL)
			<-ctx.Done()
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.DataDir, "data", envOr(getenv, "SVC_DATA", "./.svc"), "data directory of the installation (env SVC_DATA)")
	f.StringVar(&cfg.Listen, "listen", envOr(getenv, "SVC_EDGE_LISTEN", "127.0.0.1:7080"), "edge address (env SVC_EDGE_LISTEN)")
	f.StringVar(&cfg.AppsDomain, "apps-domain", envOr(getenv, "SVC_APPS_DOMAIN", "localhost"), "domain of instance URLs (env SVC_APPS_DOMAIN)")
	f.StringVar(&cfg.Network, "network", envOr(getenv, "SVC_NETWORK", "svc"), "Docker network of instances")
	f.StringVar(&logLevel, "log-level", envOr(getenv, "SVC_LOG_LEVEL", "info"), "debug, info, warn or error")
	f.DurationVar(&cfg.WakeTimeout, "wake-timeout", 3*time.Minute, "how long a request is held while its instance wakes")
	tlsFlags(f, &cfg, getenv)
	return cmd
}

// greet prints where svc runs and, on the first start, the key.
func greet(w io.Writer, url, key, dataDir string) {
	keyFile := relative(auth.KeyFile(dataDir))
	fmt.Fprintf(w, "svc is running at %s\n", url)
	if key != "" {
		fmt.Fprintf(w, "\nYour API key (shown once; saved to %s, mode 0600):\n\n  %s\n\n", keyFile, key)
	}
	fmt.Fprintf(w, "Try it:\n  curl -H \"Authorization: Bearer $(cat %s)\" %s/v1/templates\n", keyFile, url)
	cli := "svc"
	if exe, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), "svc"); fileExists(p) {
			if cli = relative(p); !filepath.IsAbs(cli) {
				cli = "./" + cli
			}
		}
	}
	fmt.Fprintf(w, "\nCreate an instance and chat with its agent:\n"+
		"  export SVC_URL=%s SVC_API_KEY=$(cat %s)\n"+
		"  %s instances create --template svc-general-small    # prints the instance id\n"+
		"  %s chat ID \"hello\"         # or no message: one per line from stdin, same session\n",
		url, keyFile, cli, cli)
}

// relative shortens p to a path from the working directory when it is
// below it.
func relative(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(wd, abs); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// failpoints returns a hook that kills the process at the named points.
// Crash tests use it (SVC_FAILPOINTS=create.recorded,...); it is empty in
// normal runs.
func failpoints(spec string) func(string) {
	if spec == "" {
		return nil
	}
	points := map[string]bool{}
	for _, p := range strings.Split(spec, ",") {
		points[strings.TrimSpace(p)] = true
	}
	return func(name string) {
		if points[name] {
			fmt.Fprintln(os.Stderr, "svcd: failpoint "+name+": killing pid "+strconv.Itoa(os.Getpid()))
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
}
