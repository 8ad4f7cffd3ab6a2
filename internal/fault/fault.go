// Package fault is the hosting plane's error vocabulary. Domain code returns
// a *fault.Error carrying a spec code; the API maps codes to HTTP statuses in
// one place (internal/api/errors.go). Anything that is not a *fault.Error is
// an internal error: logged with a request id, never sent to the client.
package fault

import (
	"errors"
	"fmt"
)

// Code is a hosting API error code from spec/hosting-api.md.
type Code string

// Hosting API error codes.
const (
	InvalidRequest         Code = "invalid_request"
	ImageTooLarge          Code = "image_too_large"
	InsufficientBalance    Code = "insufficient_balance"
	TierLimit              Code = "tier_limit"
	PerformanceUnavailable Code = "performance_unavailable"
	NotFound               Code = "not_found"
	TemplateConflict       Code = "template_conflict"
	BuildConflict          Code = "build_conflict"
	PublicPortExists       Code = "public_port_exists"
	InstanceLimitReached   Code = "instance_limit_reached"
	CapacityUnavailable    Code = "capacity_unavailable"
	TryAgain               Code = "try_again"
	RateLimited            Code = "rate_limited"
	ProvisioningFailed     Code = "provisioning_failed"
	NoCapacity             Code = "no_capacity"
	Unauthorized           Code = "unauthorized"
	Internal               Code = "internal_error"
)

// Error is an error a client may see: its code and message are sent as is.
type Error struct {
	Code    Code
	Message string
	// Detail is raw failure output (the console tail of a failed create).
	Detail string
	// Cause is logged, never sent.
	Cause error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// New returns a client-visible error with a formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns a client-visible error that keeps cause for the log.
func Wrap(cause error, code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Cause: cause}
}

// Invalid is shorthand for a 400 invalid_request.
func Invalid(format string, args ...any) *Error {
	return New(InvalidRequest, format, args...)
}

// NotFoundf is shorthand for a 404 not_found.
func NotFoundf(format string, args ...any) *Error {
	return New(NotFound, format, args...)
}

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var fe *Error
	if errors.As(err, &fe) {
		return fe, true
	}
	return nil, false
}

// Is reports whether err carries code.
func Is(err error, code Code) bool {
	fe, ok := As(err)
	return ok && fe.Code == code
}
