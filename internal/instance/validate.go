package instance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/svc-dev/svc/internal/fault"
	"github.com/svc-dev/svc/internal/store"
	"github.com/svc-dev/svc/sdk"
)

// Shape is one offered cpu/memory combination with its disk range (GB).
type Shape struct {
	CPU, Memory                   int
	DefaultDisk, MinDisk, MaxDisk int
}

// Shapes are the three shapes every template offers. The spec leaves the
// disk range per shape to us: from 1 GB up to 50, 100 and 200 GB.
var Shapes = []Shape{
	{CPU: 2, Memory: 4, DefaultDisk: 4, MinDisk: 1, MaxDisk: 50},
	{CPU: 4, Memory: 8, DefaultDisk: 6, MinDisk: 1, MaxDisk: 100},
	{CPU: 8, Memory: 16, DefaultDisk: 12, MinDisk: 1, MaxDisk: 200},
}

func shapeList() string {
	var parts []string
	for _, s := range Shapes {
		parts = append(parts, fmt.Sprintf("%d/%d (disk %d-%d GB, default %d)", s.CPU, s.Memory, s.MinDisk, s.MaxDisk, s.DefaultDisk))
	}
	return strings.Join(parts, ", ")
}

// resources validates a requested shape; nil means the smallest.
func resources(r *sdk.Resources) (sdk.Resources, error) {
	if r == nil {
		s := Shapes[0]
		return sdk.Resources{CPU: s.CPU, Memory: s.Memory, Disk: s.DefaultDisk}, nil
	}
	cpu, mem := r.CPU, r.Memory
	if cpu == 0 && mem == 0 {
		cpu, mem = Shapes[0].CPU, Shapes[0].Memory
	}
	for _, s := range Shapes {
		if s.CPU != cpu || s.Memory != mem {
			continue
		}
		disk := r.Disk
		if disk == 0 {
			disk = s.DefaultDisk
		}
		if disk < s.MinDisk || disk > s.MaxDisk {
			return sdk.Resources{}, fault.Invalid("disk %d GB is outside the %d/%d shape's range %d-%d GB; valid shapes: %s",
				disk, cpu, mem, s.MinDisk, s.MaxDisk, shapeList())
		}
		return sdk.Resources{CPU: cpu, Memory: mem, Disk: disk}, nil
	}
	return sdk.Resources{}, fault.Invalid("invalid shape %d vCPU / %d GB; valid shapes (cpu/memory): %s", cpu, mem, shapeList())
}

// ReservedEnv are the platform-set names a create's env may not use.
var ReservedEnv = []string{"SVC_INSTANCE_ID", "SVC_RUNTIME_IMAGE_REF", "SVC_AGENT_TYPE", "SVC_GATEWAY_PORT",
	"ALT_GATEWAY_PORT", "ALT_CONTROL_UI_INSTANCE_ORIGIN"}

var envKeyRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// Limits of the create and PATCH bodies.
const (
	maxEnvEntries = 64
	maxEnvBytes   = 64 * 1024
	maxEnvValue   = 4096
	maxName       = 60
	maxUser       = 200
	maxMetadata   = 4 * 1024
	maxIdle       = 86400
)

func validEnv(env map[string]string) error {
	if len(env) > maxEnvEntries {
		return fault.Invalid("env has %d entries; at most %d", len(env), maxEnvEntries)
	}
	total := 0
	for k, v := range env {
		if !envKeyRE.MatchString(k) {
			return fault.Invalid("env name %q must be uppercase letters, digits and underscores, starting with a letter", k)
		}
		for _, r := range ReservedEnv {
			if k == r {
				return fault.Invalid("env name %s is set by the platform", k)
			}
		}
		if utf8.RuneCountInString(v) > maxEnvValue {
			return fault.Invalid("env %s is longer than %d characters", k, maxEnvValue)
		}
		total += len(k) + len(v)
	}
	if total > maxEnvBytes {
		return fault.Invalid("env totals %d bytes; at most %d", total, maxEnvBytes)
	}
	return nil
}

func validName(name *string) (*string, error) {
	if name == nil || *name == "" {
		return nil, nil
	}
	if utf8.RuneCountInString(*name) > maxName {
		return nil, fault.Invalid("name is longer than %d characters", maxName)
	}
	return name, nil
}

func validUser(user *string) (*string, error) {
	if user == nil {
		return nil, nil
	}
	if utf8.RuneCountInString(*user) > maxUser {
		return nil, fault.Invalid("user is longer than %d characters", maxUser)
	}
	return user, nil
}

// validMetadata accepts a JSON object (or null) of at most 4 KB; an empty
// object or null clears.
func validMetadata(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fault.Invalid("metadata must be a JSON object")
	}
	if len(obj) == 0 {
		return nil, nil
	}
	compact, _ := json.Marshal(obj)
	if len(compact) > maxMetadata {
		return nil, fault.Invalid("metadata is %d bytes serialized; at most %d", len(compact), maxMetadata)
	}
	return compact, nil
}

func (s *Service) validIdle(v int) error {
	if v < s.cfg.MinIdleTimeout || v > maxIdle {
		return fault.Invalid("idle_timeout_seconds must be between %d and %d", s.cfg.MinIdleTimeout, maxIdle)
	}
	return nil
}

func validBudget(b *sdk.Budget) (*store.Budget, error) {
	if b == nil {
		return nil, nil
	}
	if b.MonthlyCapMicros < 0 || b.CreditMicros < 0 {
		return nil, fault.Invalid("budget amounts must not be negative")
	}
	return &store.Budget{MonthlyCapMicros: b.MonthlyCapMicros, CreditMicros: b.CreditMicros}, nil
}
