package instance

import (
	"context"
	"encoding/json"

	"github.com/svc-dev/svc/internal/fault"
	"github.com/svc-dev/svc/internal/store"
)

// Patch is a PATCH of an instance. The *Set flags tell an explicit null
// (clear) from an absent field.
type Patch struct {
	Name        *string
	NameSet     bool
	User        *string
	UserSet     bool
	Metadata    json.RawMessage
	MetadataSet bool
	AutoSleep   *bool
	IdleTimeout *int
}

// Empty reports whether the patch changes nothing.
func (p Patch) Empty() bool {
	return !p.NameSet && !p.UserSet && !p.MetadataSet && p.AutoSleep == nil && p.IdleTimeout == nil
}

// Update applies a PATCH. It takes effect without a restart; the idle
// watcher reads auto_sleep and idle_timeout_seconds from the store.
func (s *Service) Update(ctx context.Context, ws, id string, p Patch) (store.Instance, error) {
	if p.Empty() {
		return store.Instance{}, fault.Invalid("empty PATCH: send at least one of name, user, metadata, auto_sleep, idle_timeout_seconds")
	}
	name, err := validName(p.Name)
	if err != nil {
		return store.Instance{}, err
	}
	user, err := validUser(p.User)
	if err != nil {
		return store.Instance{}, err
	}
	metadata, err := validMetadata(p.Metadata)
	if err != nil {
		return store.Instance{}, err
	}
	if p.IdleTimeout != nil {
		if err := s.validIdle(*p.IdleTimeout); err != nil {
			return store.Instance{}, err
		}
	}
	return s.mutate(ctx, ws, id, func(in *store.Instance) error {
		if p.NameSet {
			in.Name = name
		}
		if p.UserSet {
			in.User = user
		}
		if p.MetadataSet {
			in.Metadata = metadata
		}
		if p.AutoSleep != nil {
			in.AutoSleep = *p.AutoSleep
		}
		if p.IdleTimeout != nil {
			in.IdleTimeout = *p.IdleTimeout
		}
		return nil
	})
}
