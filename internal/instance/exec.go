package instance

import (
	"context"
	"io"
	"path"
	"strings"
	"time"

	"github.com/svc-dev/svc/internal/fault"
	"github.com/svc-dev/svc/internal/runtime"
	"github.com/svc-dev/svc/sdk"
)

// Exec limits.
const (
	MaxExecOutput     = 512 << 10
	defaultExecTimout = 60 * time.Second
	maxExecTimeout    = time.Hour
)

// Exec runs a command in a running (or sleeping, which it wakes) instance. The output (stdout and stderr
// together) is capped at 512 KB. A string command runs under /bin/sh -c.
func (s *Service) Exec(ctx context.Context, ws, id string, req sdk.ExecRequest) (sdk.ExecResult, error) {
	var argv []string
	switch c := req.Command.(type) {
	case string:
		if c == "" {
			return sdk.ExecResult{}, fault.Invalid("command is empty")
		}
		argv = []string{"/bin/sh", "-c", c}
	case []any:
		for _, a := range c {
			s, ok := a.(string)
			if !ok {
				return sdk.ExecResult{}, fault.Invalid("command must be a string or an array of strings")
			}
			argv = append(argv, s)
		}
		if len(argv) == 0 || argv[0] == "" {
			return sdk.ExecResult{}, fault.Invalid("command is empty")
		}
	default:
		return sdk.ExecResult{}, fault.Invalid("command must be a string or an array of strings")
	}
	timeout := defaultExecTimout
	if req.TimeoutSeconds < 0 || time.Duration(req.TimeoutSeconds)*time.Second > maxExecTimeout {
		return sdk.ExecResult{}, fault.Invalid("timeout_seconds must be between 1 and %d", int(maxExecTimeout.Seconds()))
	}
	if req.TimeoutSeconds > 0 {
		timeout = time.Duration(req.TimeoutSeconds) * time.Second
	}
	if req.Cwd != "" && !path.IsAbs(req.Cwd) {
		return sdk.ExecResult{}, fault.Invalid("cwd must be an absolute path")
	}
	for k := range req.Env {
		if !envKeyRE.MatchString(k) {
			return sdk.ExecResult{}, fault.Invalid("env name %q must be uppercase letters, digits and underscores, starting with a letter", k)
		}
	}
	in, err := s.Get(ctx, ws, id)
	if err != nil {
		return sdk.ExecResult{}, err
	}
	switch {
	case in.Status == Sleeping && in.Op == "":
		// Exec wakes a sleeping instance, then runs.
		if in, err = s.Wake(ctx, id); err != nil {
			return sdk.ExecResult{}, err
		}
	case in.Status == Sleeping || in.Status == Waking:
		return sdk.ExecResult{}, busy(&in)
	}
	if in.Status != Running || in.Op == OpStop || in.Op == OpDelete {
		return sdk.ExecResult{}, fault.Invalid("exec needs a running instance; this one is %s", in.Status)
	}
	if s.hook.Activity != nil {
		s.hook.Activity(id)
	}
	res, err := s.rt.Exec(ctx, id, runtime.ExecSpec{Cmd: argv, Env: req.Env, Cwd: req.Cwd, Timeout: timeout, MaxOutput: MaxExecOutput})
	if err != nil {
		return sdk.ExecResult{}, err
	}
	if s.hook.Activity != nil {
		s.hook.Activity(id)
	}
	return sdk.ExecResult{ExitCode: res.ExitCode, Stdout: string(res.Stdout), Stderr: string(res.Stderr),
		Truncated: res.Truncated, TimedOut: res.TimedOut}, nil
}

// Logs streams an instance's console output.
func (s *Service) Logs(ctx context.Context, ws, id string, tailLines int, follow bool) (io.ReadCloser, error) {
	if tailLines < 0 {
		return nil, fault.Invalid("tail must not be negative")
	}
	if _, err := s.Get(ctx, ws, id); err != nil {
		return nil, err
	}
	st, err := s.rt.Inspect(ctx, id)
	if err != nil {
		return nil, err
	}
	if st.State == runtime.Missing {
		return io.NopCloser(strings.NewReader("")), nil
	}
	return s.rt.Logs(ctx, id, runtime.LogOptions{Tail: tailLines, Follow: follow})
}

// Metrics samples an instance's counters; a stopped instance reads zero
// CPU, memory and network, and its disk usage.
func (s *Service) Metrics(ctx context.Context, ws, id string) (sdk.Metrics, error) {
	in, err := s.Get(ctx, ws, id)
	if err != nil {
		return sdk.Metrics{}, err
	}
	m, err := s.rt.Metrics(ctx, id)
	if err != nil {
		return sdk.Metrics{}, err
	}
	return sdk.Metrics{
		CPU:     sdk.CPUMetrics{UsageSeconds: m.CPUSeconds, Percent: m.CPUPercent, Limit: float64(in.CPU)},
		Memory:  sdk.MemoryMetrics{UsedBytes: m.MemoryBytes, LimitBytes: int64(in.Memory) << 30},
		Disk:    sdk.DiskMetrics{UsedBytes: m.DiskUsedBytes, TotalBytes: m.DiskTotalBytes},
		Network: sdk.NetworkMetrics{RxBytes: m.NetRxBytes, TxBytes: m.NetTxBytes},
		At:      s.st.Now(),
	}, nil
}
