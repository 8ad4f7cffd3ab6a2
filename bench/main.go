// Command bench runs svc's benchmarks against real components and writes
// bench/RESULTS.md. Every figure that has a natural baseline is reported next
// to that baseline measured in the same run, as a ratio, because these
// machines are noisy. Usage: go run ./bench [-only NAME,...] [-out FILE]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"time"
)

// suite is one group of measurements; it appends its section to the report.
type suite struct {
	name string
	run  func(ctx context.Context, r *report) error
}

// suites lists every suite in the order they run; each lives in its own
// file (gateway.go, api.go, ...).
var suites = []suite{
	{"api", benchAPI},
	{"system", benchSystem},
	{"registry", benchRegistry},
	{"agent", benchAgent},
	{"driver", benchDriver},
	{"edge", benchEdge},
	{"gateway", benchGateway},
	{"images", benchImages},
}

func main() {
	out := flag.String("out", "bench/RESULTS.md", "results file to write")
	only := flag.String("only", "", "comma-separated suite names to run (default all)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		pprof.StartCPUProfile(f)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	r := newReport(strings.TrimSpace("go run ./bench " + strings.Join(os.Args[1:], " ")))
	want := map[string]bool{}
	for _, n := range strings.Split(*only, ",") {
		if n != "" {
			want[n] = true
		}
	}
	failed := false
	for _, s := range suites {
		if len(want) > 0 && !want[s.name] {
			continue
		}
		start := time.Now()
		fmt.Fprintf(os.Stderr, "bench: %s ...\n", s.name)
		if err := s.run(ctx, r); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %s failed: %v\n", s.name, err)
			r.section(s.name).line("**failed:** %v", err)
			failed = true
		}
		fmt.Fprintf(os.Stderr, "bench: %s done in %s\n", s.name, time.Since(start).Round(time.Second))
	}
	pprof.StopCPUProfile()
	if err := r.write(*out, len(want) > 0); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if failed {
		os.Exit(1)
	}
}
