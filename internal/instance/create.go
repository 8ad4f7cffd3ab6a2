package instance

import (
	"context"
	"errors"
	"strconv"

	"github.com/svc-dev/svc/internal/auth"
	"github.com/svc-dev/svc/internal/fault"
	"github.com/svc-dev/svc/internal/runtime"
	"github.com/svc-dev/svc/internal/store"
	"github.com/svc-dev/svc/internal/template"
	"github.com/svc-dev/svc/sdk"
)

const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// newID is an instance id: 10 lowercase alphanumerics, also a DNS label.
func newID() string { return auth.Random(10, idAlphabet) }

// Create validates a create, records the instance and provisions it. It
// returns once the instance is running, or a provisioning_failed error
// while the instance stays listed as failed with its status_reason.
func (s *Service) Create(ctx context.Context, ws store.Workspace, req sdk.CreateInstance) (store.Instance, error) {
	in, ports, err := s.plan(ctx, ws, req)
	if err != nil {
		return store.Instance{}, err
	}
	for tries := 0; ; tries++ {
		err = s.st.CreateInstance(ctx, in, ports)
		if !errors.Is(err, store.ErrConflict) || tries == 5 {
			break
		}
		in.ID = newID() // an id collision: draw again
		for i := range ports {
			if ports[i].Prefix != nil {
				ports[i].Hostname = *ports[i].Prefix + "-" + in.ID
			}
		}
	}
	if err != nil {
		return store.Instance{}, err
	}
	s.failpoint("create.recorded")
	// The client may go away; the create still finishes or fails cleanly.
	return s.provision(context.WithoutCancel(ctx), in)
}

// plan validates a create request into the row to insert.
func (s *Service) plan(ctx context.Context, ws store.Workspace, req sdk.CreateInstance) (store.Instance, []store.PublicPort, error) {
	res, err := s.tpl.Resolve(ctx, ws.ID, req.Template)
	if err != nil {
		return store.Instance{}, nil, err
	}
	shape, err := resources(req.Resources)
	if err != nil {
		return store.Instance{}, nil, err
	}
	typ := req.Type
	switch typ {
	case "", "default":
		typ = "default"
	case "performance":
		if !ws.PerformanceEnabled {
			return store.Instance{}, nil, fault.New(fault.PerformanceUnavailable, "the performance type is not enabled for this workspace")
		}
	default:
		return store.Instance{}, nil, fault.Invalid("type must be default or performance")
	}
	if err := validEnv(req.Env); err != nil {
		return store.Instance{}, nil, err
	}
	name, err := validName(req.Name)
	if err != nil {
		return store.Instance{}, nil, err
	}
	user, err := validUser(req.User)
	if err != nil {
		return store.Instance{}, nil, err
	}
	metadata, err := validMetadata(req.Metadata)
	if err != nil {
		return store.Instance{}, nil, err
	}
	budget, err := validBudget(req.Budget)
	if err != nil {
		return store.Instance{}, nil, err
	}
	idle := 900
	if req.IdleTimeoutSeconds != nil {
		if err := s.validIdle(*req.IdleTimeoutSeconds); err != nil {
			return store.Instance{}, nil, err
		}
		idle = *req.IdleTimeoutSeconds
	}
	now := s.st.Now()
	in := store.Instance{
		ID: newID(), WorkspaceID: ws.ID, Status: Starting, Op: OpCreate, OpStarted: now,
		Template: res.Template, TemplateName: res.Name, TemplateScope: res.Scope, TemplateRevision: res.Revision,
		ImageRef: res.ImageRef, ImageDigest: res.Digest, ImageRepo: res.Repo,
		DefaultPort: res.ProbePort, AgentType: res.Agent,
		CPU: shape.CPU, Memory: shape.Memory, Disk: shape.Disk, Type: typ,
		User: user, Name: name, Metadata: metadata, Env: req.Env, Budget: budget,
		AutoSleep: req.AutoSleep != nil && *req.AutoSleep, IdleTimeout: idle,
		GatewayToken: auth.Random(40, idAlphabet), Created: now, Updated: now,
	}
	platform := map[int]string{}
	if res.System != nil {
		for _, p := range res.System.PublicPorts {
			platform[p.Port] = p.Label
		}
	}
	ports, err := createPorts(in.ID, req.PublicPorts, platform)
	if err != nil {
		return store.Instance{}, nil, err
	}
	if _, ok := platform[template.MessengerPort]; ok {
		s.messengerEnv(&in, ports)
	}
	return in, ports, nil
}

// messengerEnv gives the general templates their webhook URL and secret,
// unless the create's env chose its own.
func (s *Service) messengerEnv(in *store.Instance, ports []store.PublicPort) {
	env := map[string]string{}
	for k, v := range in.Env {
		env[k] = v
	}
	for _, p := range ports {
		if p.Port == template.MessengerPort {
			if _, ok := env["MESSENGER_WEBHOOK_URL"]; !ok {
				env["MESSENGER_WEBHOOK_URL"] = s.cfg.Names.URL(p.Hostname)
			}
		}
	}
	if _, ok := env["MESSENGER_WEBHOOK_SECRET"]; !ok {
		env["MESSENGER_WEBHOOK_SECRET"] = auth.Random(32, idAlphabet)
	}
	in.Env = env
}

// provision makes the container of a recorded create and boots it.
func (s *Service) provision(ctx context.Context, in store.Instance) (store.Instance, error) {
	if in.ImageDigest == "" {
		msg := "the image of " + in.TemplateName + " has not been built on this server yet; run `make images` and create again"
		return s.fail(ctx, in, OpCreate, fault.New(fault.ProvisioningFailed, "%s", msg), "")
	}
	if err := s.boot(ctx, in); err != nil {
		return s.failBoot(ctx, in, OpCreate, err)
	}
	return s.settle(ctx, in.ID, OpCreate, Running)
}

// Spec is the runtime's view of an instance, env replayed on every start.
func (s *Service) Spec(in store.Instance) runtime.Spec {
	ref, pullAuth := s.cfg.Pull(in.ImageRepo, in.ImageDigest)
	env := map[string]string{}
	for k, v := range s.cfg.Env(in) {
		env[k] = v
	}
	for k, v := range in.Env {
		env[k] = v
	}
	imageRef := in.TemplateName + "@" + in.ImageDigest
	if in.ImageRef != nil {
		imageRef = *in.ImageRef + "@" + in.ImageDigest
	}
	// Identity variables last: the platform's word wins.
	env["SVC_INSTANCE_ID"] = in.ID
	env["SVC_RUNTIME_IMAGE_REF"] = imageRef
	env["SVC_GATEWAY_PORT"] = strconv.Itoa(template.GatewayPort)
	env["SVC_GATEWAY_TOKEN"] = in.GatewayToken
	env["SVC_INSTANCE_URL"] = s.cfg.Names.InstanceURL(in.ID)
	if in.AgentType != "" {
		env["SVC_AGENT_TYPE"] = in.AgentType
	}
	if in.TemplateName == "svc-general-alt" {
		env["ALT_GATEWAY_PORT"] = strconv.Itoa(template.GatewayPort)
		env["ALT_CONTROL_UI_INSTANCE_ORIGIN"] = s.cfg.Names.InstanceURL(in.ID)
	}
	return runtime.Spec{
		InstanceID:  in.ID,
		Image:       ref,
		PullAuth:    pullAuth,
		Env:         env,
		CPUs:        float64(in.CPU),
		MemoryBytes: int64(in.Memory) << 30,
		DiskBytes:   int64(in.Disk) << 30,
		CPUSet:      s.cpuset(in),
	}
}

// cpuset pins a performance instance to its own cores, counted from the
// last core down so shared instances keep core 0.
func (s *Service) cpuset(in store.Instance) string {
	if in.Type != "performance" || s.cfg.HostCPUs < in.CPU {
		return ""
	}
	first := s.cfg.HostCPUs - in.CPU
	return strconv.Itoa(first) + "-" + strconv.Itoa(s.cfg.HostCPUs-1)
}

func (s *Service) failpoint(name string) {
	if s.cfg.Failpoint != nil {
		s.cfg.Failpoint(name)
	}
}
