package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/svc-dev/svc/internal/instance"
	"github.com/svc-dev/svc/internal/runtime"
	"github.com/svc-dev/svc/internal/store"
	"github.com/svc-dev/svc/internal/template"
)

// Watcher puts idle auto-sleep instances to sleep. Idle means no bytes
// through any of the instance's URLs and no exec for idle_timeout_seconds
// (this process's Activity and what other processes flushed to the store)
// and, for an instance with a gateway, no agent turn in progress: the
// gateway is asked before the instance is put to sleep.
type Watcher struct {
	st        *store.Store
	instances *instance.Service
	rt        runtime.Driver
	act       *Activity
	now       func() time.Time
	log       *slog.Logger
	client    *http.Client

	// awake is when this watcher first saw each instance running and
	// settled: idle time never counts from before that (a wake, a start,
	// or this process's start).
	awake map[string]time.Time

	mu       sync.Mutex
	sleeping map[string]bool
	wg       sync.WaitGroup
}

// NewWatcher returns a watcher.
func NewWatcher(st *store.Store, instances *instance.Service, rt runtime.Driver, act *Activity, now func() time.Time, log *slog.Logger) *Watcher {
	if now == nil {
		now = time.Now
	}
	return &Watcher{st: st, instances: instances, rt: rt, act: act, now: now, log: log,
		client:   &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}},
		awake:    map[string]time.Time{},
		sleeping: map[string]bool{}}
}

// Run checks every interval until ctx ends, then waits for sleeps in
// progress.
func (w *Watcher) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	defer w.wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := w.Check(ctx); err != nil {
				w.log.Warn("idle watcher", "err", err)
			}
		}
	}
}

// Check looks at every instance once and starts the sleeps that are due.
func (w *Watcher) Check(ctx context.Context) error {
	all, err := w.st.AllInstances(ctx)
	if err != nil {
		return err
	}
	stored, err := w.st.Activity(ctx)
	if err != nil {
		return err
	}
	now := w.now()
	seen := map[string]bool{}
	live := make(map[string]bool, len(all))
	for _, in := range all {
		live[in.ID] = true
	}
	w.act.Retain(live)
	for _, in := range all {
		if in.Status != instance.Running || in.Op != "" {
			continue
		}
		seen[in.ID] = true
		since, ok := w.awake[in.ID]
		if !ok {
			w.awake[in.ID] = now
			continue
		}
		if !in.AutoSleep || in.PastDue {
			continue
		}
		last := max(since.UnixMilli(), w.act.Last(in.ID), stored[in.ID])
		if now.UnixMilli()-last < int64(in.IdleTimeout)*1000 {
			continue
		}
		w.startSleep(ctx, in, since, stored[in.ID])
	}
	for id := range w.awake {
		if !seen[id] {
			delete(w.awake, id)
		}
	}
	return nil
}

// startSleep asks the gateway (if any) and sleeps the instance, in the
// background so one slow stop does not hold up the others.
func (w *Watcher) startSleep(ctx context.Context, in store.Instance, since time.Time, stored int64) {
	w.mu.Lock()
	if w.sleeping[in.ID] {
		w.mu.Unlock()
		return
	}
	w.sleeping[in.ID] = true
	w.mu.Unlock()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer func() {
			w.mu.Lock()
			delete(w.sleeping, in.ID)
			w.mu.Unlock()
		}()
		turn := int64(0)
		if hasGateway(in) {
			act, err := w.gatewayActivity(ctx, in)
			switch {
			case err != nil:
				// An old gateway without the endpoint, or none at all on
				// the port: traffic alone decides.
				w.log.Debug("gateway activity unknown", "instance", in.ID, "err", err)
			case act.ActiveResponses > 0:
				w.log.Debug("not sleeping: a turn is running", "instance", in.ID, "turns", act.ActiveResponses)
				return
			default:
				turn = act.LastActivityMs
			}
		}
		idle := func(cur store.Instance) bool {
			last := max(since.UnixMilli(), w.act.Last(cur.ID), stored, turn)
			return w.now().UnixMilli()-last >= int64(cur.IdleTimeout)*1000
		}
		_, slept, err := w.instances.Sleep(ctx, in.ID, idle)
		switch {
		case err != nil:
			w.log.Warn("sleep", "instance", in.ID, "err", err)
		case slept:
			w.log.Info("instance asleep after idle", "instance", in.ID, "idle_timeout", in.IdleTimeout)
		}
	}()
}

// hasGateway reports whether the instance runs svc-gateway on 3737: the
// gateway templates, and workspace templates whose URL routes to 3737
// (images built on the platform's base image).
func hasGateway(in store.Instance) bool {
	return in.AgentType != "" || routePort(in) == template.GatewayPort
}

// GatewayActivity is the answer of the gateway's GET /v1/activity.
type GatewayActivity struct {
	// ActiveResponses counts turns in progress, with or without a client.
	ActiveResponses int `json:"active_responses"`
	// LastActivityMs is when a turn last started, emitted or ended.
	LastActivityMs int64 `json:"last_activity_ms"`
}

// gatewayActivity asks the instance's gateway, straight at the container
// (not through the edge, so asking is not itself activity).
func (w *Watcher) gatewayActivity(ctx context.Context, in store.Instance) (GatewayActivity, error) {
	var out GatewayActivity
	st, err := w.rt.Inspect(ctx, in.ID)
	if err != nil {
		return out, err
	}
	if !st.Addr.IsValid() {
		return out, fmt.Errorf("container has no address")
	}
	u := "http://" + net.JoinHostPort(st.Addr.String(), strconv.Itoa(template.GatewayPort)) + "/v1/activity"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return out, err
	}
	req.Header.Set("X-Svc-Gateway-Token", in.GatewayToken)
	resp, err := w.client.Do(req)
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return out, fmt.Errorf("gateway answered %s", resp.Status)
	}
	return out, json.NewDecoder(resp.Body).Decode(&out)
}
