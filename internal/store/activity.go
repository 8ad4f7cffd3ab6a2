package store

import (
	"context"
	"database/sql"
)

// RecordActivity stores the newest activity times (epoch ms) of instances,
// keeping the later of the stored and the given value, in one transaction.
func (s *Store) RecordActivity(ctx context.Context, last map[string]int64) error {
	if len(last) == 0 {
		return nil
	}
	greatest := "MAX"
	if s.dialect == postgres {
		greatest = "GREATEST"
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		for id, ms := range last {
			_, err := s.exec(ctx, tx, `INSERT INTO instance_activity (instance_id, last_ms) VALUES (?, ?)
				ON CONFLICT (instance_id) DO UPDATE SET last_ms = `+greatest+`(instance_activity.last_ms, excluded.last_ms)`, id, ms)
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// Activity reads the stored activity times (epoch ms) of live instances,
// and forgets those of deleted ones.
func (s *Store) Activity(ctx context.Context) (map[string]int64, error) {
	if _, err := s.exec(ctx, s.db, `DELETE FROM instance_activity WHERE instance_id NOT IN
		(SELECT id FROM instances WHERE deleted IS NULL)`); err != nil {
		return nil, err
	}
	rows, err := s.query(ctx, s.db, `SELECT instance_id, last_ms FROM instance_activity`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id string
		var ms int64
		if err := rows.Scan(&id, &ms); err != nil {
			return nil, err
		}
		out[id] = ms
	}
	return out, rows.Err()
}
