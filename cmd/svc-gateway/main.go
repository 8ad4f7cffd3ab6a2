// Command svc-gateway is the in-instance gateway every system template
// runs on port 3737 (spec/gateway-api.md). Configuration comes from the
// environment the platform sets and a few flags; see docs/gateway.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "svc-gateway:", err)
		os.Exit(1)
	}
}
