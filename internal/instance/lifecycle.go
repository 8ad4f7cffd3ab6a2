package instance

import (
	"context"
	"errors"

	"github.com/svc-dev/svc/internal/fault"
	"github.com/svc-dev/svc/internal/runtime"
	"github.com/svc-dev/svc/internal/store"
)

// errSame marks a call the state table answers with the same ack again.
var errSame = errors.New("same ack")

// errWakeInstead marks a start of a sleeping instance: it wakes.
var errWakeInstead = errors.New("wake instead")

// take moves an instance into op under the row lock: decide inspects the
// current row and either returns errSame (nothing to do), another error,
// or nil after setting the status the operation shows while it runs.
func (s *Service) take(ctx context.Context, ws, id, op string, decide func(in *store.Instance) error) (store.Instance, bool, error) {
	var current store.Instance
	in, err := s.mutate(ctx, ws, id, func(in *store.Instance) error {
		current = *in
		if in.Op != "" {
			return busy(in)
		}
		if err := decide(in); err != nil {
			return err
		}
		in.Op, in.OpStarted = op, s.st.Now()
		return nil
	})
	if errors.Is(err, errSame) {
		return current, false, nil
	}
	return in, err == nil, err
}

// Stop halts a running instance; a stopped one acks again. A sleeping
// instance (its checkpoint written) stops for good: the checkpoint is
// discarded and its URLs no longer wake it.
func (s *Service) Stop(ctx context.Context, ws, id string) (store.Instance, error) {
	in, taken, err := s.take(ctx, ws, id, OpStop, func(in *store.Instance) error {
		switch in.Status {
		case Stopped:
			return errSame
		case Running, Sleeping:
			return nil
		}
		return fault.Invalid("cannot stop an instance that is %s", in.Status)
	})
	if err != nil || !taken {
		return in, err
	}
	return s.finishStop(context.WithoutCancel(ctx), in)
}

func (s *Service) finishStop(ctx context.Context, in store.Instance) (store.Instance, error) {
	if err := s.rt.Stop(ctx, in.ID, s.cfg.StopGrace); err != nil {
		// Still running as far as we know: give the instance back.
		s.settleKeep(ctx, in.ID, OpStop)
		return in, err
	}
	if s.cp != nil {
		if err := s.cp.Discard(ctx, in.ID); err != nil {
			s.log.Warn("discard checkpoint", "instance", in.ID, "err", err)
		}
	}
	s.failpoint("stop.stopped")
	return s.settle(ctx, in.ID, OpStop, Stopped)
}

// settleKeep ends an operation leaving the status as it was.
func (s *Service) settleKeep(ctx context.Context, id, op string) {
	s.mutate(ctx, "", id, func(in *store.Instance) error {
		if in.Op == op {
			in.Op = ""
		}
		return nil
	})
}

// Start boots a stopped (or failed) instance; a running one acks again
// and a sleeping one wakes. The container is recreated from the image it
// already ran if it is gone.
func (s *Service) Start(ctx context.Context, ws, id string) (store.Instance, error) {
	in, taken, err := s.take(ctx, ws, id, OpStart, func(in *store.Instance) error {
		switch in.Status {
		case Running:
			return errSame
		case Sleeping:
			return errWakeInstead
		case Stopped, Failed:
			in.Status = Starting
			return nil
		}
		return fault.Invalid("cannot start an instance that is %s", in.Status)
	})
	if errors.Is(err, errWakeInstead) {
		return s.Wake(ctx, id)
	}
	if err != nil || !taken {
		return in, err
	}
	return s.finishStart(context.WithoutCancel(ctx), in)
}

func (s *Service) finishStart(ctx context.Context, in store.Instance) (store.Instance, error) {
	if in.ImageDigest == "" {
		return s.provision(ctx, in)
	}
	if err := s.boot(ctx, in); err != nil {
		return s.failBoot(ctx, in, OpStart, err)
	}
	return s.settle(ctx, in.ID, OpStart, Running)
}

// Restart stops and starts a running instance's container, keeping its
// disk and OS layer. Concurrent restarts: one proceeds, the rest try_again.
func (s *Service) Restart(ctx context.Context, ws, id string) (store.Instance, error) {
	in, _, err := s.take(ctx, ws, id, OpRestart, func(in *store.Instance) error {
		switch in.Status {
		case Running:
			return nil
		case Sleeping, Waking:
			return errAsleep(in, "restart")
		}
		return fault.Invalid("cannot restart an instance that is %s; start it instead", in.Status)
	})
	if err != nil {
		return in, err
	}
	return s.finishRestart(context.WithoutCancel(ctx), in)
}

func (s *Service) finishRestart(ctx context.Context, in store.Instance) (store.Instance, error) {
	err := s.rt.Stop(ctx, in.ID, s.cfg.StopGrace)
	if err == nil {
		s.failpoint("restart.stopped")
		err = s.boot(ctx, in)
	}
	if err == nil {
		return s.settle(ctx, in.ID, OpRestart, Running)
	}
	// The spec: running if the container is still up, else failed.
	if st, ierr := s.rt.Inspect(ctx, in.ID); ierr == nil && st.State == runtime.Running && !errors.Is(err, errExited) {
		fe := &fault.Error{Code: fault.ProvisioningFailed, Message: "restart failed: " + s.redact(err.Error()), Cause: err}
		s.mutate(ctx, "", in.ID, func(cur *store.Instance) error {
			if cur.Op == OpRestart {
				cur.Op = ""
			}
			cur.Reason = s.reason(string(fe.Code), OpRestart, fe.Message, "")
			return nil
		})
		return in, fe
	}
	return s.failBoot(ctx, in, OpRestart, err)
}

// Delete removes an instance, its container and its disk. A repeat is
// not_found.
func (s *Service) Delete(ctx context.Context, ws, id string) error {
	in, _, err := s.take(ctx, ws, id, OpDelete, func(in *store.Instance) error { return nil })
	if err != nil {
		return err
	}
	return s.finishDelete(context.WithoutCancel(ctx), in)
}

func (s *Service) finishDelete(ctx context.Context, in store.Instance) error {
	if err := s.rt.Remove(ctx, in.ID); err != nil {
		s.settleKeep(ctx, in.ID, OpDelete)
		return err
	}
	s.failpoint("delete.removed")
	now := s.st.Now()
	_, err := s.mutate(ctx, "", in.ID, func(in *store.Instance) error {
		in.Op, in.Deleted = "", &now
		return nil
	})
	return err
}
