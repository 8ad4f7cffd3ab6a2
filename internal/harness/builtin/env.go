package builtin

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/svc-dev/svc/internal/agent"
)

// Optional environment variables beyond the model endpoint's three.
const (
	EnvProvider      = "SVC_MODEL_PROVIDER"       // provider name in model ids (default "svc")
	EnvContextWindow = "SVC_MODEL_CONTEXT_WINDOW" // window of models the endpoint does not size
	EnvEffort        = "SVC_REASONING_EFFORT"     // default effort / thinking level
)

// Efforts are the reasoning_effort values of the spec.
var Efforts = []string{"none", "minimal", "low", "medium", "high", "xhigh", "max", "ultra"}

// EnvConfig reads a Config from the environment the platform sets in an
// instance: SVC_MODEL_BASE_URL, SVC_MODEL_API_KEY, SVC_MODEL and HOME, plus
// the optional SVC_MODEL_PROVIDER, SVC_MODEL_CONTEXT_WINDOW and
// SVC_REASONING_EFFORT. cmd/svc-gateway passes os.Getenv.
func EnvConfig(getenv func(string) string) (Config, error) {
	cfg := Config{
		Home:            getenv("HOME"),
		ModelBaseURL:    getenv(agent.EnvBaseURL),
		APIKey:          getenv(agent.EnvAPIKey),
		Model:           getenv(agent.EnvModel),
		Provider:        getenv(EnvProvider),
		ReasoningEffort: getenv(EnvEffort),
	}
	if v := getenv(EnvContextWindow); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return Config{}, fmt.Errorf("%s=%q: want a positive number of tokens", EnvContextWindow, v)
		}
		cfg.ContextWindow = n
	}
	if cfg.ReasoningEffort != "" && !slices.Contains(Efforts, cfg.ReasoningEffort) {
		return Config{}, fmt.Errorf("%s=%q: want one of %v", EnvEffort, cfg.ReasoningEffort, Efforts)
	}
	return cfg, nil
}
