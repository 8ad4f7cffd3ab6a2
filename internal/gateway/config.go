package gateway

import "time"

// Config holds every interval and limit of the gateway, so tests shorten
// them instead of waiting for the production values.
type Config struct {
	// Token is the per-instance token every request must carry in
	// X-Svc-Gateway-Token. Empty serves loopback clients only (development).
	Token string

	// Home is the agent's home directory: "~" in file paths.
	Home string
	// Workspace is the default directory of a listing or archive with no
	// path; "~/" is expanded against Home.
	Workspace string

	// Tick is the whitespace keep-alive of a non-streaming response.
	Tick time.Duration
	// KeepAlive is the interval of the ":keepalive" SSE comment.
	KeepAlive time.Duration
	// BufferTTL is how long a finished run's event buffer is kept; after it
	// a replay is synthesized from the record.
	BufferTTL time.Duration
	// RecordTTL is how long a finished response record is kept.
	RecordTTL time.Duration
	// WriteTimeout drops a streaming or waiting client that cannot take a
	// write for this long (stalled, not reading); the turn goes on.
	WriteTimeout time.Duration
	// HealthTimeout bounds a harness health probe.
	HealthTimeout time.Duration

	// MaxBody caps a POST /v1/responses body.
	MaxBody int64
	// MaxSmallBody caps the JSON bodies of session and file calls.
	MaxSmallBody int64
	// MaxMetadataPairs and MaxMetadataBytes cap request metadata.
	MaxMetadataPairs int
	MaxMetadataBytes int
	// MaxEvents is the event buffer of one run; beyond it buffering stops.
	MaxEvents int
	// TailEvents is how many events past MaxEvents stay available to live
	// clients that are catching up; a client further behind is ended.
	TailEvents int
	// MaxRecords caps the response records kept in memory.
	MaxRecords int
	// MaxContexts caps the sessions whose last context is remembered.
	MaxContexts int
	// MaxListEntries caps a directory listing.
	MaxListEntries int
}

// DefaultConfig returns the production values of spec/gateway-api.md.
func DefaultConfig() Config {
	return Config{
		Home:             "/home/user",
		Workspace:        "~/.svc-gateway/workspace",
		Tick:             25 * time.Second,
		KeepAlive:        30 * time.Second,
		BufferTTL:        60 * time.Second,
		RecordTTL:        30 * time.Minute,
		WriteTimeout:     2 * time.Minute,
		HealthTimeout:    5 * time.Second,
		MaxBody:          2 << 20,
		MaxSmallBody:     64 << 10,
		MaxMetadataPairs: 16,
		MaxMetadataBytes: 64 << 10,
		MaxEvents:        100_000,
		TailEvents:       4096,
		MaxRecords:       1000,
		MaxContexts:      1000,
		MaxListEntries:   1000,
	}
}
