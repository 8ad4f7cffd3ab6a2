// Command svcd is the svc server: `svcd serve` runs the hosting API, the
// edge, the private registry, the reconciler and the idle watcher; `svcd
// edge` runs the edge alone next to it; `svcd admin` holds operator
// commands.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/svc-dev/svc/internal/version"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "svcd:", err)
		os.Exit(1)
	}
}

// run is the whole program, with its dependencies passed in.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	root := &cobra.Command{
		Use:           "svcd",
		Short:         "svc server: hosting API, private registry, reconciler",
		Version:       version.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(serveCmd(getenv, stdout, stderr), edgeCmd(getenv, stdout, stderr), adminCmd(getenv, stdout))
	return root.ExecuteContext(ctx)
}

// envOr returns the environment's value of key, or def.
func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}
