package instance

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/svc-dev/svc/internal/fault"
	"github.com/svc-dev/svc/internal/runtime"
	"github.com/svc-dev/svc/internal/store"
)

// Recover finishes the operations a previous process left in flight (its
// op column is still set): creates and starts are driven to running or
// failed, stops to stopped, restarts to running, deletes to deleted,
// sleeps to sleeping and wakes to running. Call
// it once at start, before serving, from the only process owning the
// runtime. It returns when every operation has settled.
func (s *Service) Recover(ctx context.Context) error {
	all, err := s.st.AllInstances(ctx)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	for _, in := range all {
		if in.Op == "" {
			continue
		}
		s.log.Info("recovering interrupted operation", "instance", in.ID, "op", in.Op)
		wg.Add(1)
		go func(in store.Instance) {
			defer wg.Done()
			var err error
			switch in.Op {
			case OpCreate:
				_, err = s.provision(ctx, in)
			case OpStart:
				_, err = s.finishStart(ctx, in)
			case OpStop:
				_, err = s.finishStop(ctx, in)
			case OpRestart:
				_, err = s.finishRestart(ctx, in)
			case OpDelete:
				err = s.finishDelete(ctx, in)
			case OpSleep:
				_, err = s.finishSleep(ctx, in)
			case OpWake:
				_, err = s.finishWake(ctx, in)
			default:
				s.settleKeep(ctx, in.ID, in.Op)
			}
			if err != nil {
				s.log.Warn("recovered operation failed", "instance", in.ID, "op", in.Op, "err", err)
			}
		}(in)
	}
	wg.Wait()
	return nil
}

// Reconcile brings the runtime and the store into agreement: it removes
// containers and disks of this install that no live instance owns, marks
// running instances whose container vanished or exited as stopped (with
// the reason), and stops containers of instances that should not run.
// Instances with an operation in flight are left to that operation.
func (s *Service) Reconcile(ctx context.Context) error {
	// List the runtime first: an instance recorded after this read has no
	// container in it, so it cannot be mistaken for an orphan.
	ids, err := s.rt.List(ctx)
	if err != nil {
		return fmt.Errorf("list runtime: %w", err)
	}
	all, err := s.st.AllInstances(ctx)
	if err != nil {
		return err
	}
	live := map[string]store.Instance{}
	for _, in := range all {
		live[in.ID] = in
	}
	for _, id := range ids {
		if _, ok := live[id]; ok {
			continue
		}
		s.log.Info("removing orphan", "instance", id)
		if err := s.rt.Remove(ctx, id); err != nil {
			s.log.Warn("remove orphan", "instance", id, "err", err)
		}
	}
	for _, in := range all {
		if in.Op != "" {
			continue
		}
		if err := s.reconcileOne(ctx, in); err != nil {
			s.log.Warn("reconcile", "instance", in.ID, "err", err)
		}
	}
	return nil
}

func (s *Service) reconcileOne(ctx context.Context, in store.Instance) error {
	st, err := s.rt.Inspect(ctx, in.ID)
	if err != nil {
		return err
	}
	switch in.Status {
	case Running:
		var code, msg string
		switch st.State {
		case runtime.Missing:
			code, msg = "container_lost", "the container disappeared; start the instance to recreate it"
		case runtime.Exited, runtime.Created:
			code, msg = "container_exited", fmt.Sprintf("the main process exited with code %d; start the instance to boot it again", st.ExitCode)
		default:
			return nil
		}
		_, err := s.mutate(ctx, "", in.ID, func(cur *store.Instance) error {
			if cur.Op != "" || cur.Status != Running {
				return nil // someone moved it meanwhile
			}
			cur.Status = Stopped
			cur.Reason = s.reason(code, "reconcile", msg, s.consoleTail(ctx, in.ID))
			return nil
		})
		return err
	case Stopped, Failed, Sleeping:
		// A sleeping instance's container is stopped (or checkpointed):
		// that is its resting state, only a running one is corrected.
		if st.State == runtime.Running || st.State == runtime.Restarting {
			return s.correct(ctx, in.ID)
		}
	}
	return nil
}

// correct stops the container of an instance that should not run. It owns
// the op column meanwhile, so a start or wake racing the reconciler waits
// (try_again) instead of having its fresh container stopped under it.
func (s *Service) correct(ctx context.Context, id string) error {
	_, taken, err := s.take(ctx, "", id, OpCorrect, func(in *store.Instance) error {
		if in.Status != Stopped && in.Status != Failed && in.Status != Sleeping {
			return errSame // moved meanwhile
		}
		return nil
	})
	if err != nil || !taken {
		if fault.Is(err, fault.TryAgain) {
			return nil // someone else owns it now
		}
		return err
	}
	defer s.settleKeep(ctx, id, OpCorrect)
	return s.rt.Stop(ctx, id, s.cfg.StopGrace)
}

// Run reconciles every interval until ctx ends.
func (s *Service) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.Reconcile(ctx); err != nil {
				s.log.Warn("reconcile", "err", err)
			}
		}
	}
}
