package main

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/svc-dev/svc/internal/gateway"
	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/harness/builtin"
	"github.com/svc-dev/svc/internal/harness/coding"
	"github.com/svc-dev/svc/internal/harness/codingd"
	"github.com/svc-dev/svc/internal/harness/generala"
	"github.com/svc-dev/svc/internal/harness/generalb"
)

// newHarness builds the harness with id: one case per harness built into
// this gateway. An id without a case is not provisioned.
func newHarness(id string, env builtin.Config) (harness.Harness, error) {
	switch id {
	case harness.GeneralA:
		return generala.New(env)
	case harness.GeneralB:
		return generalb.New(env)
	case harness.CodingA, harness.CodingB, harness.CodingC:
		return coding.New(id)
	case harness.CodingD:
		return codingd.New(env)
	default:
		return nil, fmt.Errorf("harness %s is not built into this gateway", id)
	}
}

// registry provisions the instance's default harness (SVC_AGENT_TYPE,
// general-a when unset) plus those listed in SVC_HARNESSES
// (comma-separated ids). A harness that fails to start is logged and left
// unprovisioned: its turns fail with agent_unavailable while files,
// sessions of the others, health and version keep working.
func registry(agentType, extra string, env builtin.Config, log *slog.Logger) (gateway.Registry, error) {
	reg := gateway.Registry{Default: agentType}
	if reg.Default == "" {
		reg.Default = harness.GeneralA
	}
	ids := []string{reg.Default}
	for _, id := range strings.Split(extra, ",") {
		if id = strings.TrimSpace(id); id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		if !slices.Contains(harness.IDs, id) {
			return reg, fmt.Errorf("unknown harness %q (SVC_AGENT_TYPE/SVC_HARNESSES): one of %v", id, harness.IDs)
		}
		h, err := newHarness(id, env)
		if err != nil {
			log.Error("harness not provisioned", "agent", id, "err", err)
			continue
		}
		reg.Harnesses = append(reg.Harnesses, h)
	}
	return reg, nil
}

// closeHarnesses releases what harnesses hold (databases, background title
// calls) once the gateway has settled every turn.
func closeHarnesses(reg gateway.Registry) {
	for _, h := range reg.Harnesses {
		if c, ok := h.(interface{ Close() error }); ok {
			c.Close()
		}
	}
}
