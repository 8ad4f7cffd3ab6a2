package instance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/svc-dev/svc/internal/fault"
	"github.com/svc-dev/svc/internal/runtime"
	"github.com/svc-dev/svc/internal/store"
)

// errExited is a boot whose container stopped on its own.
var errExited = errors.New("container exited")

// boot makes (if missing) and starts an instance's container, then waits
// until it runs and, with a default port, until that port accepts.
func (s *Service) boot(ctx context.Context, in store.Instance) error {
	if err := s.rt.Create(ctx, s.Spec(in)); err != nil {
		return fmt.Errorf("create container: %w", err)
	}
	s.failpoint("boot.created")
	if err := s.rt.Start(ctx, in.ID); err != nil {
		return fmt.Errorf("start container: %w", err)
	}
	return s.waitReady(ctx, in)
}

func (s *Service) waitReady(ctx context.Context, in store.Instance) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.BootTimeout)
	defer cancel()
	pause := 5 * time.Millisecond
	for {
		st, err := s.rt.Inspect(ctx, in.ID)
		if err != nil {
			return err
		}
		switch {
		case st.State == runtime.Exited || st.State == runtime.Missing:
			return fmt.Errorf("%w with code %d", errExited, st.ExitCode)
		case st.State == runtime.Restarting || st.RestartCount > 0:
			return fmt.Errorf("%w with code %d and is being restarted", errExited, st.ExitCode)
		case st.State == runtime.Running && in.DefaultPort == 0:
			return nil
		case st.State == runtime.Running && dial(ctx, st.Addr, in.DefaultPort):
			return nil
		}
		select {
		case <-ctx.Done():
			if in.DefaultPort != 0 {
				return fmt.Errorf("port %d did not open on 0.0.0.0 within %s", in.DefaultPort, s.cfg.BootTimeout)
			}
			return ctx.Err()
		case <-time.After(pause):
		}
		if pause < 100*time.Millisecond {
			pause *= 2
		}
	}
}

func dial(ctx context.Context, addr netip.Addr, port int) bool {
	if !addr.IsValid() {
		return false
	}
	d := net.Dialer{Timeout: 250 * time.Millisecond}
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(addr.String(), strconv.Itoa(port)))
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// consoleTail is the last 2000 characters of the console log, redacted.
func (s *Service) consoleTail(ctx context.Context, id string) string {
	rc, err := s.rt.Logs(ctx, id, runtime.LogOptions{Tail: 200})
	if err != nil {
		return ""
	}
	defer rc.Close()
	b, _ := io.ReadAll(io.LimitReader(rc, 256<<10))
	return tail(s.redact(string(b)), 2000)
}

// failBoot records a failed boot. The container is stopped so a crashing
// image does not loop; a restart whose container is still up stays running.
func (s *Service) failBoot(ctx context.Context, in store.Instance, op string, cause error) (store.Instance, error) {
	detail := s.consoleTail(ctx, in.ID)
	msg := s.redact(cause.Error())
	if detail == "" {
		detail = msg
	}
	if err := s.rt.Stop(ctx, in.ID, 0); err != nil {
		s.log.Warn("stop after failed boot", "instance", in.ID, "err", err)
	}
	fe := &fault.Error{Code: fault.ProvisioningFailed, Message: op + " failed: " + msg, Detail: detail, Cause: cause}
	return s.fail(ctx, in, op, fe, detail)
}

// fail settles an operation as failed with a status_reason and returns err.
func (s *Service) fail(ctx context.Context, in store.Instance, op string, fe *fault.Error, detail string) (store.Instance, error) {
	if detail == "" {
		detail = fe.Detail
	}
	out, err := s.mutate(ctx, "", in.ID, func(cur *store.Instance) error {
		if cur.Op == op {
			cur.Op = ""
		}
		cur.Status, cur.SleptAt = Failed, nil
		cur.Reason = s.reason(string(fe.Code), op, fe.Message, detail)
		return nil
	})
	if err != nil {
		return out, err
	}
	return out, fe
}

// settle ends an operation in status with no failure reason. slept_at
// only lives while sleeping or waking.
func (s *Service) settle(ctx context.Context, id, op, status string) (store.Instance, error) {
	return s.mutate(ctx, "", id, func(in *store.Instance) error {
		if in.Op == op {
			in.Op = ""
		}
		in.Status = status
		in.Reason = nil
		if status != Sleeping && status != Waking {
			in.SleptAt = nil
		}
		return nil
	})
}
