package instance

import (
	"context"
	"errors"
	"unicode/utf8"

	"github.com/svc-dev/svc/internal/auth"
	"github.com/svc-dev/svc/internal/fault"
	"github.com/svc-dev/svc/internal/hostname"
	"github.com/svc-dev/svc/internal/store"
	"github.com/svc-dev/svc/sdk"
)

// Public port limits of the spec.
const (
	MaxPublicPorts = 20
	maxLabel       = 64
	slugLen        = 20
)

// PublicReserved are the platform ports that cannot be made public.
var PublicReserved = map[int]bool{3737: true, 9119: true, 7681: true, 8080: true, 6080: true, 7890: true, 22022: true}

func validPort(p sdk.PortRequest) error {
	if p.Port < 1 || p.Port > 65535 {
		return fault.Invalid("port must be between 1 and 65535")
	}
	if PublicReserved[p.Port] {
		return fault.Invalid("port %d is a platform port and cannot be made public (reserved: 3737, 6080, 7681, 7890, 8080, 9119, 22022)", p.Port)
	}
	if p.Prefix != nil && !hostname.ValidPrefix(*p.Prefix) {
		return fault.Invalid("prefix must be 1 to 30 lowercase letters, digits or hyphens, with no leading or trailing hyphen")
	}
	if p.Label != nil && utf8.RuneCountInString(*p.Label) > maxLabel {
		return fault.Invalid("label is longer than %d characters", maxLabel)
	}
	return nil
}

// newPort makes the stored entry: {prefix}-{id} with a prefix, else a
// random slug that cannot be mistaken for an instance host.
func newPort(id string, p sdk.PortRequest) store.PublicPort {
	host := auth.Random(slugLen, "abcdefghijklmnopqrstuvwxyz0123456789")
	if p.Prefix != nil {
		host = *p.Prefix + "-" + id
	}
	return store.PublicPort{InstanceID: id, Port: p.Port, Hostname: host, Prefix: p.Prefix, Label: p.Label}
}

// AddPublicPort makes a port of an instance public.
func (s *Service) AddPublicPort(ctx context.Context, ws, id string, req sdk.PortRequest) (store.PublicPort, error) {
	if _, err := s.Get(ctx, ws, id); err != nil {
		return store.PublicPort{}, err
	}
	if err := validPort(req); err != nil {
		return store.PublicPort{}, err
	}
	p, err := s.st.AddPublicPort(ctx, newPort(id, req), MaxPublicPorts)
	switch {
	case errors.Is(err, store.ErrPortExists):
		return p, fault.New(fault.PublicPortExists, "port %d is already public", req.Port)
	case errors.Is(err, store.ErrHostTaken):
		return p, fault.New(fault.PublicPortExists, "prefix %q is already used by another port of this instance", *req.Prefix)
	case errors.Is(err, store.ErrLimit):
		return p, fault.Invalid("an instance has at most %d public ports", MaxPublicPorts)
	case errors.Is(err, store.ErrNotFound):
		return p, errNotFound()
	}
	return p, err
}

// PublicPorts lists an instance's public ports.
func (s *Service) PublicPorts(ctx context.Context, ws, id string) ([]store.PublicPort, error) {
	if _, err := s.Get(ctx, ws, id); err != nil {
		return nil, err
	}
	return s.st.PublicPorts(ctx, id)
}

// DeletePublicPort revokes a public port; a repeat is not_found.
func (s *Service) DeletePublicPort(ctx context.Context, ws, id string, port int) error {
	if _, err := s.Get(ctx, ws, id); err != nil {
		return err
	}
	err := s.st.DeletePublicPort(ctx, id, port)
	if errors.Is(err, store.ErrNotFound) {
		return fault.NotFoundf("port %d is not public", port)
	}
	return err
}

// createPorts validates a create's public_ports and adds the template's
// platform ports (a declared platform port keeps its hostname choice and
// gets the platform label).
func createPorts(id string, reqs []sdk.PortRequest, platform map[int]string) ([]store.PublicPort, error) {
	seen := map[int]bool{}
	prefixes := map[string]bool{}
	var out []store.PublicPort
	for _, r := range reqs {
		if err := validPort(r); err != nil {
			return nil, err
		}
		if seen[r.Port] {
			return nil, fault.New(fault.PublicPortExists, "port %d is listed twice in public_ports", r.Port)
		}
		if r.Prefix != nil {
			if prefixes[*r.Prefix] {
				return nil, fault.New(fault.PublicPortExists, "prefix %q is listed twice in public_ports", *r.Prefix)
			}
			prefixes[*r.Prefix] = true
		}
		seen[r.Port] = true
		if label, ok := platform[r.Port]; ok && r.Label == nil {
			r.Label = &label
		}
		out = append(out, newPort(id, r))
	}
	for port, label := range platform {
		if !seen[port] {
			label := label
			out = append(out, newPort(id, sdk.PortRequest{Port: port, Label: &label}))
		}
	}
	if len(out) > MaxPublicPorts {
		return nil, fault.Invalid("an instance has at most %d public ports", MaxPublicPorts)
	}
	return out, nil
}
