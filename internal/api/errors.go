package api

import (
	"net/http"

	"github.com/svc-dev/svc/internal/fault"
)

// status is the one mapping from hosting error codes to HTTP statuses.
func status(code fault.Code) int {
	switch code {
	case fault.InvalidRequest, fault.ImageTooLarge:
		return http.StatusBadRequest
	case fault.Unauthorized:
		return http.StatusUnauthorized
	case fault.InsufficientBalance:
		return http.StatusPaymentRequired
	case fault.TierLimit, fault.PerformanceUnavailable:
		return http.StatusForbidden
	case fault.NotFound:
		return http.StatusNotFound
	case fault.TemplateConflict, fault.BuildConflict, fault.PublicPortExists, fault.InstanceLimitReached,
		fault.CapacityUnavailable, fault.TryAgain:
		return http.StatusConflict
	case fault.RateLimited:
		return http.StatusTooManyRequests
	case fault.ProvisioningFailed:
		return http.StatusBadGateway
	case fault.NoCapacity:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
