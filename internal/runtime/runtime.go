// Package runtime defines the Driver that runs instance containers. A driver
// knows nothing of templates, workspaces or billing: it makes, starts, stops
// and removes one container and its disk per instance id. Every method takes
// a ctx and is idempotent, so the instance state machine can re-drive an
// operation after a crash. Drivers live in sub-packages (runtime/docker).
package runtime

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"time"
)

// Errors a driver returns (wrapped) so callers can tell cases apart with
// errors.Is. The instance service recreates a missing container with Create.
var (
	// ErrNoContainer: the instance has no container (Start, Logs, Exec).
	ErrNoContainer = errors.New("runtime: no container")
	// ErrNotRunning: the container exists but is not running (Exec).
	ErrNotRunning = errors.New("runtime: container not running")
)

// Auth is a registry credential the driver passes to its image pull.
type Auth struct {
	Username string
	Password string
}

// Spec is everything a driver needs to make an instance's container.
type Spec struct {
	InstanceID string
	// Image is a pull reference pinned by digest (host/repo@sha256:...).
	Image    string
	PullAuth *Auth
	Env      map[string]string
	CPUs     float64
	// MemoryBytes is the container's hard memory limit.
	MemoryBytes int64
	// DiskBytes is the size of the instance disk (a real quota).
	DiskBytes int64
	// CPUSet pins the container to cores ("0-1"); empty means shared cores.
	CPUSet string
}

// State is what a driver observes of a container.
type State string

const (
	Missing    State = "missing" // no container (the disk may exist)
	Created    State = "created" // made, never started
	Running    State = "running"
	Restarting State = "restarting"
	Exited     State = "exited" // stopped or dead
)

// Status is one observation of an instance's container.
type Status struct {
	State        State
	ExitCode     int
	RestartCount int
	// Addr is the container's address on the instance network while running.
	Addr       netip.Addr
	StartedAt  time.Time
	FinishedAt time.Time
}

// LogOptions selects console output.
type LogOptions struct {
	// Tail is the number of last lines; 0 means all.
	Tail   int
	Follow bool
}

// ExecSpec is one command run inside a running container.
type ExecSpec struct {
	Cmd     []string
	Env     map[string]string
	Cwd     string
	Timeout time.Duration
	// MaxOutput caps stdout and stderr together; the rest is read and
	// discarded, so the command never blocks on output. 0 means no cap.
	MaxOutput int
}

// ExecResult is what an exec produced. ExitCode is -1 when the command was
// killed at its timeout.
type ExecResult struct {
	ExitCode  int
	Stdout    []byte
	Stderr    []byte
	Truncated bool
	TimedOut  bool
}

// Metrics are point-in-time counters of one instance.
type Metrics struct {
	CPUSeconds float64 // cumulative CPU time
	// CPUPercent is of one core, averaged since the driver's previous
	// sample of the instance (or since its start, on the first).
	CPUPercent       float64
	MemoryBytes      int64
	MemoryLimitBytes int64
	DiskUsedBytes    int64
	DiskTotalBytes   int64
	NetRxBytes       int64
	NetTxBytes       int64
}

// Driver runs instance containers on one kind of infrastructure.
type Driver interface {
	// Create pulls spec.Image, makes the instance disk when it does not
	// exist (an empty filesystem of spec.DiskBytes, seeded with the image's
	// home directories) and creates the container without starting it. An
	// existing container is left as it is.
	Create(ctx context.Context, spec Spec) error
	// Start starts the container; a running container is left running. A
	// missing container is an error wrapping ErrNoContainer.
	Start(ctx context.Context, id string) error
	// Stop halts the container, waiting up to grace before killing it. A
	// missing or stopped container is not an error.
	Stop(ctx context.Context, id string, grace time.Duration) error
	// Remove deletes the container and the disk. Missing parts are skipped.
	Remove(ctx context.Context, id string) error
	// Inspect observes the container; a missing one reads State Missing.
	Inspect(ctx context.Context, id string) (Status, error)
	// Logs returns the console output, stdout and stderr interleaved. With
	// Follow the stream ends when ctx is done, the reader is closed or the
	// container stops.
	Logs(ctx context.Context, id string, opts LogOptions) (io.ReadCloser, error)
	// Exec runs a command in the running container and returns once it has
	// exited or been killed at its timeout. A command that runs and fails is
	// a result with its exit code, not an error; a stopped container is an
	// error wrapping ErrNotRunning.
	Exec(ctx context.Context, id string, spec ExecSpec) (ExecResult, error)
	// Metrics samples the instance's counters; a stopped instance reports
	// its disk and zeros elsewhere.
	Metrics(ctx context.Context, id string) (Metrics, error)
	// List returns the ids of every instance of this install that has a
	// container or a disk, so the reconciler can find orphans.
	List(ctx context.Context) ([]string, error)
}

// Checkpointer is the optional capability of a driver that can freeze a
// running container to disk and resume it later (CRIU), so a sleeping
// instance wakes with its processes and memory. The instance service uses
// it for auto-sleep when CheckpointSupport says the host can; otherwise
// sleep stops the container and wake is a fresh boot with files kept.
type Checkpointer interface {
	// CheckpointSupport returns nil when this host can checkpoint, or why
	// it cannot.
	CheckpointSupport() error
	// Checkpoint writes the container's processes and memory to disk and
	// stops it.
	Checkpoint(ctx context.Context, id string) error
	// Restore starts the container from its checkpoint; an error leaves it
	// stopped (the caller boots it fresh).
	Restore(ctx context.Context, id string) error
	// Discard removes the checkpoint, if any.
	Discard(ctx context.Context, id string) error
}

// HostAddresser is a driver whose containers reach the host at an address
// (a bridge gateway); svcd serves instance-facing endpoints, such as the
// managed model, there.
type HostAddresser interface {
	HostAddr(ctx context.Context) (netip.Addr, error)
}
