package store

import "context"

// ModelCall is one call an instance made to the managed model.
type ModelCall struct {
	InstanceID   string
	WorkspaceID  string
	Model        string
	Purpose      string // "" for a turn, "title", "subagent", ...
	Status       int    // the upstream's HTTP status (0: never answered)
	InputTokens  int64
	OutputTokens int64
	Created      int64
}

// RecordModelCall appends a model call.
func (s *Store) RecordModelCall(ctx context.Context, c ModelCall) error {
	if c.Created == 0 {
		c.Created = s.Now()
	}
	_, err := s.exec(ctx, s.db, `INSERT INTO model_calls (instance_id, workspace_id, model, purpose, status, input_tokens, output_tokens, created)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, c.InstanceID, c.WorkspaceID, c.Model, c.Purpose, c.Status, c.InputTokens, c.OutputTokens, c.Created)
	return err
}

// ModelCalls lists an instance's model calls, oldest first.
func (s *Store) ModelCalls(ctx context.Context, instanceID string) ([]ModelCall, error) {
	rows, err := s.query(ctx, s.db, `SELECT instance_id, workspace_id, model, purpose, status, input_tokens, output_tokens, created
		FROM model_calls WHERE instance_id = ? ORDER BY id`, instanceID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ModelCall
	for rows.Next() {
		var c ModelCall
		if err := rows.Scan(&c.InstanceID, &c.WorkspaceID, &c.Model, &c.Purpose, &c.Status, &c.InputTokens, &c.OutputTokens, &c.Created); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
