package gateway

import (
	"net/http"
	"time"
)

// Activity: the platform's idle watcher asks GET /v1/activity before it
// puts an auto-sleep instance to sleep, so an agent turn that runs with no
// client attached (no bytes through the edge) is not frozen mid-turn.
// Like every route it needs the instance token the edge holds.

// touch records that a turn started, emitted or ended now.
func (s *Server) touch() { s.lastActivity.Store(time.Now().UnixMilli()) }

// running counts the turns in progress.
func (st *store) running() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.busy)
}

func (s *Server) activity(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, http.StatusOK, map[string]int64{
		"active_responses": int64(s.records.running()),
		"last_activity_ms": s.lastActivity.Load(),
	})
}
