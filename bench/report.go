package main

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"
)

// report collects one markdown section per suite. Writing merges with the
// existing file, so running one suite keeps the others' last figures.
type report struct {
	command  string
	sections map[string]*section
	order    []string
}

type section struct {
	name string
	buf  bytes.Buffer
}

func newReport(command string) *report {
	return &report{command: command, sections: map[string]*section{}}
}

func (r *report) section(name string) *section {
	s, ok := r.sections[name]
	if !ok {
		s = &section{name: name}
		r.sections[name] = s
		r.order = append(r.order, name)
	}
	return s
}

func (s *section) line(format string, args ...any) *section {
	fmt.Fprintf(&s.buf, format+"\n", args...)
	return s
}

// table writes a markdown table.
func (s *section) table(header []string, rows [][]string) *section {
	s.buf.WriteString("\n| " + strings.Join(header, " | ") + " |\n|")
	for range header {
		s.buf.WriteString("---|")
	}
	s.buf.WriteString("\n")
	for _, row := range rows {
		s.buf.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	s.buf.WriteString("\n")
	return s
}

var sectionRE = regexp.MustCompile(`(?ms)^## (\S+)\n(.*?)(?:^<!-- end -->\n)`)

func (r *report) write(path string, merge bool) error {
	existing := map[string]string{}
	if merge {
		if old, err := os.ReadFile(path); err == nil {
			for _, m := range sectionRE.FindAllStringSubmatch(string(old), -1) {
				existing[m[1]] = m[2]
			}
		}
	}
	host, _ := os.Hostname()
	for _, name := range r.order {
		s := r.sections[name]
		existing[name] = fmt.Sprintf("Measured %s on %s (%d cores, %s) with `%s`.\n\n%s",
			time.Now().UTC().Format("2006-01-02 15:04 MST"), host, runtime.NumCPU(), runtime.Version(), r.command, s.buf.String())
	}
	names := make([]string, 0, len(existing))
	for n := range existing {
		names = append(names, n)
	}
	sort.Strings(names)
	var out bytes.Buffer
	out.WriteString("# Benchmark results\n\nWritten by `make bench` (`go run ./bench`); `go run ./bench -only NAME` reruns one section and keeps the others; `-cpuprofile FILE` profiles the run.\n\n")
	for _, n := range names {
		fmt.Fprintf(&out, "## %s\n%s<!-- end -->\n\n", n, existing[n])
	}
	return os.WriteFile(path, out.Bytes(), 0o644)
}
