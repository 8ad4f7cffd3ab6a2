// Package coding is the gateway side of the coding harnesses that run on
// the user's own vendor account or key (coding-a, coding-b, coding-c). The
// vendor CLIs they wrap are not in the images yet, so no account can be
// connected: each reports healthy false with the spec's hint, its turns
// fail with auth_error and that hint, and it has no sessions. When the
// CLIs land, connecting an account turns these into running harnesses.
package coding

import (
	"context"
	"fmt"

	"github.com/svc-dev/svc/internal/harness"
)

// Unconnected is a coding harness with no vendor account connected.
type Unconnected struct {
	id   string
	hint string
}

var (
	_ harness.Harness       = Unconnected{}
	_ harness.SessionIssuer = Unconnected{}
)

// Hints are the spec's next steps per vendor.
var hints = map[string]string{
	harness.CodingA: "connect a vendor-A account before the first chat turn",
	harness.CodingB: "run a vendor-B device login or set a vendor-B API key before the first chat turn",
	harness.CodingC: "set a vendor-C API key or run a vendor-C device-code login before the first chat turn",
}

// New returns the harness for coding-a, coding-b or coding-c.
func New(id string) (Unconnected, error) {
	hint, ok := hints[id]
	if !ok {
		return Unconnected{}, fmt.Errorf("coding: %s is not an account-based coding harness", id)
	}
	return Unconnected{id: id, hint: hint}, nil
}

// ID is the harness id.
func (h Unconnected) ID() string { return h.id }

// Run fails: the turn needs the user's vendor account.
func (h Unconnected) Run(ctx context.Context, turn harness.Turn, emit func(harness.Event) error) (harness.Result, error) {
	return harness.Result{}, &harness.Error{Code: "auth_error",
		Message: h.id + " has no vendor account connected", Hint: h.hint}
}

// Sessions is empty: nothing has run.
func (h Unconnected) Sessions(context.Context) ([]harness.SessionRow, error) {
	return []harness.SessionRow{}, nil
}

// History of any id is empty.
func (h Unconnected) History(context.Context, string) ([]harness.Message, error) {
	return []harness.Message{}, nil
}

// Rename: coding-c has no editable titles; the others match no session.
func (h Unconnected) Rename(context.Context, string, string) (bool, error) {
	if h.id == harness.CodingC {
		return false, &harness.Error{Code: "rename_unsupported", Message: "coding-c sessions have no editable title"}
	}
	return false, nil
}

// Delete matches no session.
func (h Unconnected) Delete(context.Context, string) (bool, error) { return false, nil }

// Healthy is false until an account is connected.
func (h Unconnected) Healthy(context.Context) bool { return false }

// Models: the vendor's models are listed once connected.
func (h Unconnected) Models(context.Context) ([]harness.Model, error) { return []harness.Model{}, nil }

// Issued: these harnesses mint their own session ids and have issued none.
func (h Unconnected) Issued(context.Context, string) (bool, error) { return false, nil }

// Hint is the next step the harness asks for (health and turn errors).
func (h Unconnected) Hint() string { return h.hint }
