// Command svc is the CLI of svc, built only on the public Go SDK.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/svc-dev/svc/internal/version"
	"github.com/svc-dev/svc/sdk"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		if code, ok := err.(exitCode); ok {
			os.Exit(int(code)) // the remote command's exit code
		}
		fmt.Fprintln(os.Stderr, "svc:", err)
		if e, ok := err.(*sdk.Error); ok && e.Detail != "" {
			fmt.Fprintln(os.Stderr, e.Detail)
		}
		os.Exit(1)
	}
}

// exitCode is returned to exit with a remote command's status.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// cli carries what every command needs.
type cli struct {
	url, key string
	json     bool
	getenv   func(string) string
	stdin    io.Reader
	stdout   io.Writer
	stderr   io.Writer
}

func (c *cli) client() (*sdk.Client, error) {
	key := c.key
	if key == "" {
		// make run writes the first key here; handy on the server itself.
		data := c.getenv("SVC_DATA")
		if data == "" {
			data = ".svc"
		}
		if b, err := os.ReadFile(filepath.Join(data, "api-key")); err == nil {
			key = strings.TrimSpace(string(b))
		}
	}
	if key == "" {
		return nil, fmt.Errorf("no API key: set SVC_API_KEY or pass --key")
	}
	return sdk.New(c.url, key), nil
}

// print writes v as JSON with --json, else calls table.
func (c *cli) print(v any, table func(w *tabwriter.Writer)) error {
	if c.json {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	table(w)
	return w.Flush()
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	c := &cli{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:           "svc",
		Short:         "Run AI agents in containers: instances, templates, chat",
		Version:       version.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	url := getenv("SVC_URL")
	if url == "" {
		url = "http://localhost:7070"
	}
	root.PersistentFlags().StringVar(&c.url, "url", url, "base URL of the svc server (env SVC_URL)")
	root.PersistentFlags().StringVar(&c.key, "key", getenv("SVC_API_KEY"), "API key (env SVC_API_KEY; default: .svc/api-key)")
	root.PersistentFlags().BoolVar(&c.json, "json", false, "print JSON instead of tables")
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(templatesCmd(c), instancesCmd(c), chatCmd(c))
	return root.ExecuteContext(ctx)
}

func orDash(s *string) string {
	if s == nil || *s == "" {
		return "-"
	}
	return *s
}
