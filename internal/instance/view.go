package instance

import (
	"github.com/svc-dev/svc/internal/store"
	"github.com/svc-dev/svc/sdk"
)

// View renders an instance as the API returns it.
func (s *Service) View(in store.Instance, ports []store.PublicPort) sdk.Instance {
	out := sdk.Instance{
		ID:                 in.ID,
		Status:             in.Status,
		Template:           in.Template,
		TemplateRevision:   in.TemplateRevision,
		ImageRef:           in.ImageRef,
		Resources:          sdk.Resources{CPU: in.CPU, Memory: in.Memory, Disk: in.Disk},
		Type:               in.Type,
		URL:                s.cfg.Names.InstanceURL(in.ID),
		DomainURLs:         []string{},
		PublicPorts:        []sdk.PublicPort{},
		User:               in.User,
		Name:               in.Name,
		Metadata:           in.Metadata,
		AutoSleep:          in.AutoSleep,
		IdleTimeoutSeconds: in.IdleTimeout,
		PastDue:            in.PastDue,
		Created:            in.Created,
	}
	if in.ImageDigest != "" {
		d := in.ImageDigest
		out.ImageDigest = &d
	}
	if in.Reason != nil {
		r := sdk.StatusReason(*in.Reason)
		out.StatusReason = &r
	}
	if in.Status == Sleeping || in.Status == Waking {
		out.SleptAt = in.SleptAt
	}
	for _, p := range ports {
		out.PublicPorts = append(out.PublicPorts, s.PortView(p))
	}
	return out
}

// PortView renders a public port entry.
func (s *Service) PortView(p store.PublicPort) sdk.PublicPort {
	return sdk.PublicPort{Port: p.Port, URL: s.cfg.Names.URL(p.Hostname), DomainURLs: []string{},
		Prefix: p.Prefix, Label: p.Label, Created: p.Created}
}
