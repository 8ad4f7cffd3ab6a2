package sdk

import "encoding/json"

// Template is a system or workspace template.
type Template struct {
	Name        string  `json:"name"`
	Scope       string  `json:"scope"` // "system" or "workspace"
	ImageRef    *string `json:"image_ref"`
	ImageDigest *string `json:"image_digest"`
	DefaultPort int     `json:"default_port"`
	Description string  `json:"description"`
	// Revision and Revisions are set on workspace templates only; Revisions
	// only by GET /v1/templates/{name}.
	Revision  *int               `json:"revision,omitempty"`
	Revisions []TemplateRevision `json:"revisions,omitempty"`
	// Tag is the dated release tag of a system template's current image.
	Tag     string `json:"tag,omitempty"`
	Created int64  `json:"created,omitempty"`
}

// TemplateRevision is one published image of a workspace template.
type TemplateRevision struct {
	Revision    int     `json:"revision"`
	ImageRef    *string `json:"image_ref"`
	ImageDigest string  `json:"image_digest"`
	Created     int64   `json:"created"`
}

// RegistryAuth is a registry credential, used once and never stored.
type RegistryAuth struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// CreateTemplate is the body of POST /v1/templates.
type CreateTemplate struct {
	Name         string        `json:"name"`
	ImageRef     string        `json:"image_ref"`
	RegistryAuth *RegistryAuth `json:"registry_auth,omitempty"`
	Description  string        `json:"description,omitempty"`
	DefaultPort  *int          `json:"default_port,omitempty"`
}

// UpdateTemplate is the body of PATCH /v1/templates/{name}.
type UpdateTemplate struct {
	ImageRef     *string       `json:"image_ref,omitempty"`
	RegistryAuth *RegistryAuth `json:"registry_auth,omitempty"`
	Description  *string       `json:"description,omitempty"`
	DefaultPort  *int          `json:"default_port,omitempty"`
}

// Resources is an instance shape plus its disk.
type Resources struct {
	CPU    int `json:"cpu"`
	Memory int `json:"memory"`
	Disk   int `json:"disk"`
}

// StatusReason says why the last lifecycle operation failed.
type StatusReason struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Detail    string `json:"detail,omitempty"`
	Operation string `json:"operation"`
	At        int64  `json:"at"`
}

// PublicPort is one public (unauthenticated) URL of an instance port.
type PublicPort struct {
	Port       int      `json:"port"`
	URL        string   `json:"url"`
	DomainURLs []string `json:"domain_urls"`
	Prefix     *string  `json:"prefix"`
	Label      *string  `json:"label"`
	Created    int64    `json:"created"`
}

// Budget caps an instance's managed usage.
type Budget struct {
	MonthlyCapMicros int64 `json:"monthly_cap_micros"`
	CreditMicros     int64 `json:"credit_micros"`
}

// Instance is one managed container.
type Instance struct {
	ID                 string          `json:"id"`
	Status             string          `json:"status"`
	StatusReason       *StatusReason   `json:"status_reason"`
	Template           string          `json:"template"`
	TemplateRevision   *int            `json:"template_revision"`
	ImageRef           *string         `json:"image_ref"`
	ImageDigest        *string         `json:"image_digest"`
	Resources          Resources       `json:"resources"`
	Type               string          `json:"type"`
	URL                string          `json:"url"`
	DomainURLs         []string        `json:"domain_urls"`
	PublicPorts        []PublicPort    `json:"public_ports"`
	User               *string         `json:"user"`
	Name               *string         `json:"name"`
	Metadata           json.RawMessage `json:"metadata"`
	AutoSleep          bool            `json:"auto_sleep"`
	IdleTimeoutSeconds int             `json:"idle_timeout_seconds"`
	SleptAt            *int64          `json:"slept_at,omitempty"`
	PastDue            bool            `json:"past_due"`
	Created            int64           `json:"created"`
}

// PortRequest asks for a public port on create.
type PortRequest struct {
	Port   int     `json:"port"`
	Prefix *string `json:"prefix,omitempty"`
	Label  *string `json:"label,omitempty"`
}

// CreateInstance is the body of POST /v1/instances; every field is optional.
type CreateInstance struct {
	Template           string            `json:"template,omitempty"`
	Resources          *Resources        `json:"resources,omitempty"`
	Type               string            `json:"type,omitempty"`
	User               *string           `json:"user,omitempty"`
	Name               *string           `json:"name,omitempty"`
	Metadata           json.RawMessage   `json:"metadata,omitempty"`
	Env                map[string]string `json:"env,omitempty"`
	Budget             *Budget           `json:"budget,omitempty"`
	AutoSleep          *bool             `json:"auto_sleep,omitempty"`
	IdleTimeoutSeconds *int              `json:"idle_timeout_seconds,omitempty"`
	PublicPorts        []PortRequest     `json:"public_ports,omitempty"`
}

// Ack is the answer of stop, start and restart.
type Ack struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// Deleted is the answer of a delete.
type Deleted struct {
	ID      string `json:"id,omitempty"`
	Name    string `json:"name,omitempty"`
	Port    int    `json:"port,omitempty"`
	Deleted bool   `json:"deleted"`
}

// ExecRequest runs a command in an instance. Command is an argv list or a
// string run by /bin/sh -c.
type ExecRequest struct {
	Command        any               `json:"command"`
	TimeoutSeconds int               `json:"timeout_seconds,omitempty"`
	Env            map[string]string `json:"env,omitempty"`
	Cwd            string            `json:"cwd,omitempty"`
}

// ExecResult is what an exec printed. ExitCode is -1 when it timed out.
type ExecResult struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	Truncated bool   `json:"truncated"`
	TimedOut  bool   `json:"timed_out"`
}

// Metrics are an instance's counters at one moment.
type Metrics struct {
	CPU     CPUMetrics     `json:"cpu"`
	Memory  MemoryMetrics  `json:"memory"`
	Disk    DiskMetrics    `json:"disk"`
	Network NetworkMetrics `json:"network"`
	At      int64          `json:"at"`
}

type CPUMetrics struct {
	UsageSeconds float64 `json:"usage_seconds"`
	Percent      float64 `json:"percent"`
	Limit        float64 `json:"limit"`
}

type MemoryMetrics struct {
	UsedBytes  int64 `json:"used_bytes"`
	LimitBytes int64 `json:"limit_bytes"`
}

type DiskMetrics struct {
	UsedBytes  int64 `json:"used_bytes"`
	TotalBytes int64 `json:"total_bytes"`
}

type NetworkMetrics struct {
	RxBytes int64 `json:"rx_bytes"`
	TxBytes int64 `json:"tx_bytes"`
}

// List is the { data: [...] } wrapper of every list.
type List[T any] struct {
	Data []T `json:"data"`
}

// SignedURLRequest is the body of POST /v1/instances/{id}/signed-urls.
// Port defaults to the instance's default route; the URL lives
// ExpiresInSeconds (default 3600, at most 86400).
type SignedURLRequest struct {
	Port             *int `json:"port,omitempty"`
	ExpiresInSeconds *int `json:"expires_in_seconds,omitempty"`
}

// SignedURL opens one host of an instance in a browser without a key.
type SignedURL struct {
	URL       string `json:"url"`
	Port      int    `json:"port"`
	ExpiresAt int64  `json:"expires_at"`
}
