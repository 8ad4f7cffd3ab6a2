package instance

import (
	"context"

	"github.com/svc-dev/svc/internal/fault"
	"github.com/svc-dev/svc/internal/runtime"
	"github.com/svc-dev/svc/internal/store"
)

// Sleep and wake. Sleep flips the status to sleeping (slept_at set) before
// the container is touched, holding the op column while the checkpoint is
// written, so stop and start answer 409 try_again until it is done. Wake is
// single-flight: callers in this process share one wake; callers in other
// processes meet the op column and retry.

// Sleep puts an idle auto-sleep instance to sleep. idle is asked again
// under the row lock, so traffic that arrived after the caller decided
// keeps the instance awake. It returns the instance and whether it slept.
func (s *Service) Sleep(ctx context.Context, id string, idle func(in store.Instance) bool) (store.Instance, bool, error) {
	in, taken, err := s.take(ctx, "", id, OpSleep, func(in *store.Instance) error {
		if in.Status != Running || !in.AutoSleep || in.PastDue || !idle(*in) {
			return errSame
		}
		now := s.st.Now()
		in.Status, in.SleptAt = Sleeping, &now
		return nil
	})
	if err != nil || !taken {
		return in, false, err
	}
	if s.hook.Asleep != nil {
		s.hook.Asleep(id)
	}
	out, err := s.finishSleep(context.WithoutCancel(ctx), in)
	return out, err == nil, err
}

func (s *Service) finishSleep(ctx context.Context, in store.Instance) (store.Instance, error) {
	s.failpoint("sleep.checkpoint")
	var err error
	if s.cp != nil {
		if err = s.cp.Checkpoint(ctx, in.ID); err != nil {
			s.log.Warn("checkpoint failed; stopping instead", "instance", in.ID, "err", err)
			err = s.rt.Stop(ctx, in.ID, s.cfg.StopGrace)
		}
	} else {
		err = s.rt.Stop(ctx, in.ID, s.cfg.StopGrace)
	}
	if err != nil {
		// Still running as far as we know: give the instance back awake.
		out, _ := s.mutate(ctx, "", in.ID, func(cur *store.Instance) error {
			if cur.Op == OpSleep {
				cur.Op, cur.Status, cur.SleptAt = "", Running, nil
			}
			return nil
		})
		return out, err
	}
	s.failpoint("sleep.stopped")
	return s.mutate(ctx, "", in.ID, func(cur *store.Instance) error {
		if cur.Op == OpSleep {
			cur.Op = ""
		}
		return nil
	})
}

// wakeCall is one wake in flight in this process.
type wakeCall struct {
	done chan struct{}
	in   store.Instance
	err  error
}

// Wake brings a sleeping instance back and returns it running; a running
// instance returns at once. Concurrent callers share one wake, which runs
// to its end even if every caller gives up (ctx only bounds the wait).
// While another process wakes it, or while its checkpoint is being
// written, the answer is 409 try_again. Callers check the workspace first.
func (s *Service) Wake(ctx context.Context, id string) (store.Instance, error) {
	s.wakeMu.Lock()
	c, ok := s.wakes[id]
	if !ok {
		c = &wakeCall{done: make(chan struct{})}
		s.wakes[id] = c
		go func() {
			c.in, c.err = s.wake(context.WithoutCancel(ctx), id)
			s.wakeMu.Lock()
			delete(s.wakes, id)
			s.wakeMu.Unlock()
			close(c.done)
		}()
	}
	s.wakeMu.Unlock()
	select {
	case <-c.done:
		return c.in, c.err
	case <-ctx.Done():
		return store.Instance{}, ctx.Err()
	}
}

func (s *Service) wake(ctx context.Context, id string) (store.Instance, error) {
	in, taken, err := s.take(ctx, "", id, OpWake, func(in *store.Instance) error {
		switch {
		case in.Status == Running:
			return errSame
		case in.Status != Sleeping:
			return fault.Invalid("cannot wake an instance that is %s", in.Status)
		case in.PastDue:
			return fault.New(fault.InsufficientBalance, "instance %s is suspended for non-payment; top up the wallet first", in.ID)
		}
		in.Status = Waking
		return nil
	})
	if err != nil || !taken {
		return in, err
	}
	s.wakeCount.Add(1)
	return s.finishWake(ctx, in)
}

func (s *Service) finishWake(ctx context.Context, in store.Instance) (store.Instance, error) {
	restored := false
	if s.cp != nil {
		if err := s.cp.Restore(ctx, in.ID); err == nil {
			restored = s.waitReady(ctx, in) == nil
		} else {
			s.log.Info("no checkpoint to restore; booting fresh", "instance", in.ID, "err", err)
		}
		if !restored {
			s.rt.Stop(ctx, in.ID, 0)
			s.cp.Discard(ctx, in.ID)
		}
	}
	if !restored {
		if err := s.boot(ctx, in); err != nil {
			return s.failBoot(ctx, in, OpWake, err)
		}
	}
	return s.settle(ctx, in.ID, OpWake, Running)
}

// Wakes counts the wakes this process has run (the edge's tests and
// benchmarks check that concurrent requests cause exactly one).
func (s *Service) Wakes() int64 { return s.wakeCount.Load() }

// errAsleep is the 400 of update, restart, resize and restore on a
// sleeping instance.
func errAsleep(in *store.Instance, op string) error {
	return fault.Invalid("cannot %s an instance that is %s; wake it first (start, exec or any request to its URL)", op, in.Status)
}

// checkpointer returns the driver's checkpoint capability when this host
// supports it, and logs which kind of sleep the host does.
func checkpointer(rt runtime.Driver, s *Service) runtime.Checkpointer {
	cp, ok := rt.(runtime.Checkpointer)
	if !ok {
		s.log.Info("sleep stops containers: the runtime cannot checkpoint")
		return nil
	}
	if err := cp.CheckpointSupport(); err != nil {
		s.log.Info("sleep stops containers (wake is a fresh boot with files kept)", "why", err.Error())
		return nil
	}
	s.log.Info("sleep checkpoints containers with CRIU")
	return cp
}
