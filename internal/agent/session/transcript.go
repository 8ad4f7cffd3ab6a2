package session

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"

	"github.com/svc-dev/svc/internal/agent"
	"github.com/svc-dev/svc/internal/harness"
)

// Entry is one visible transcript message.
type Entry struct {
	Role      string // user, assistant, system
	Content   string
	Thinking  string
	CreatedAt int64
	// Replay is what the model saw for this entry (the user message with
	// its attached files; the assistant's tool calls, results and answer).
	// Nil replays {Role, Content}.
	Replay []agent.Message
}

// Append adds entries to session id, creating it (with model and thinking)
// when it does not exist, and updates its activity, count and preview.
func (s *Store) Append(ctx context.Context, id, model, thinking string, entries []Entry) error {
	if len(entries) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := entries[len(entries)-1].CreatedAt
	if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, model, thinking, created_at, last_active)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) WHERE archived_at IS NULL DO NOTHING`, id, model, thinking, entries[0].CreatedAt, now); err != nil {
		return err
	}
	var key int64
	if err := tx.QueryRowContext(ctx, `SELECT key FROM sessions WHERE id = ? AND archived_at IS NULL`, id).Scan(&key); err != nil {
		return err
	}
	var preview sql.NullString
	for _, e := range entries {
		var replay sql.NullString
		if e.Replay != nil {
			b, err := json.Marshal(e.Replay)
			if err != nil {
				return err
			}
			replay = sql.NullString{String: string(b), Valid: true}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (session_key, role, content, thinking, replay, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, key, e.Role, e.Content, e.Thinking, replay, e.CreatedAt); err != nil {
			return err
		}
		if e.Role == "user" && !preview.Valid {
			preview = sql.NullString{String: Preview(e.Content), Valid: true}
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET last_active = MAX(last_active, ?),
		message_count = message_count + ?, preview = COALESCE(preview, ?) WHERE key = ?`, now, len(entries), preview, key); err != nil {
		return err
	}
	return tx.Commit()
}

// Touch marks a live session active without adding messages.
func (s *Store) Touch(ctx context.Context, id string, now int64) error {
	_, err := s.db.ExecContext(ctx, `UPDATE sessions SET last_active = MAX(last_active, ?) WHERE id = ? AND archived_at IS NULL`, now, id)
	return err
}

// MessageID formats a message row id; "msg_" keeps it distinct from the
// 32-hex session ids.
func MessageID(n int64) string { return "msg_" + strconv.FormatInt(n, 10) }

// History is the visible transcript of a live session, oldest first; an
// unknown or archived id has none.
func (s *Store) History(ctx context.Context, id string) ([]harness.Message, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT m.id, m.role, m.content, m.thinking, m.created_at
		FROM messages m JOIN sessions s ON s.key = m.session_key
		WHERE s.id = ? AND s.archived_at IS NULL ORDER BY m.id`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []harness.Message{}
	for rows.Next() {
		var n int64
		m := harness.Message{SessionID: id}
		if err := rows.Scan(&n, &m.Role, &m.Content, &m.Thinking, &m.CreatedAt); err != nil {
			return nil, err
		}
		m.ID = MessageID(n)
		out = append(out, m)
	}
	return out, rows.Err()
}

// Replay is the conversation to send the model before a new message.
func (s *Store) Replay(ctx context.Context, id string) ([]agent.Message, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT m.role, m.content, m.replay
		FROM messages m JOIN sessions s ON s.key = m.session_key
		WHERE s.id = ? AND s.archived_at IS NULL ORDER BY m.id`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []agent.Message
	for rows.Next() {
		var role, content string
		var replay sql.NullString
		if err := rows.Scan(&role, &content, &replay); err != nil {
			return nil, err
		}
		if replay.Valid {
			var msgs []agent.Message
			if err := json.Unmarshal([]byte(replay.String), &msgs); err == nil {
				out = append(out, msgs...)
				continue
			}
		}
		out = append(out, agent.Message{Role: role, Content: content})
	}
	return out, rows.Err()
}
