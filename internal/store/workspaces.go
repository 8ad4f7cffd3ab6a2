package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Workspace owns keys, templates, instances and a wallet.
type Workspace struct {
	ID                 string
	Name               string
	PerformanceEnabled bool
	Created            int64
}

// CreateWorkspace inserts a workspace and its empty wallet.
func (s *Store) CreateWorkspace(ctx context.Context, id, name string) (Workspace, error) {
	w := Workspace{ID: id, Name: name, Created: s.Now()}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := s.exec(ctx, tx, `INSERT INTO workspaces (id, name, created) VALUES (?, ?, ?)`, w.ID, w.Name, w.Created); err != nil {
			return err
		}
		_, err := s.exec(ctx, tx, `INSERT INTO wallets (workspace_id, updated) VALUES (?, ?)`, w.ID, w.Created)
		return err
	})
	return w, err
}

// Workspace reads one workspace.
func (s *Store) Workspace(ctx context.Context, id string) (Workspace, error) {
	var w Workspace
	err := s.row(ctx, s.db, `SELECT id, name, performance_enabled, created FROM workspaces WHERE id = ?`, id).
		Scan(&w.ID, &w.Name, &w.PerformanceEnabled, &w.Created)
	if errors.Is(err, sql.ErrNoRows) {
		return w, ErrNotFound
	}
	return w, err
}

// Workspaces lists every workspace, oldest first.
func (s *Store) Workspaces(ctx context.Context) ([]Workspace, error) {
	rows, err := s.query(ctx, s.db, `SELECT id, name, performance_enabled, created FROM workspaces ORDER BY created, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Workspace
	for rows.Next() {
		var w Workspace
		if err := rows.Scan(&w.ID, &w.Name, &w.PerformanceEnabled, &w.Created); err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// SetPerformance enables or disables the performance instance type.
func (s *Store) SetPerformance(ctx context.Context, id string, on bool) error {
	res, err := s.exec(ctx, s.db, `UPDATE workspaces SET performance_enabled = ? WHERE id = ?`, on, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// CreateAPIKey stores the hash of a key; the key itself is never stored.
func (s *Store) CreateAPIKey(ctx context.Context, id, workspaceID, hash, prefix string) error {
	_, err := s.exec(ctx, s.db, `INSERT INTO api_keys (id, workspace_id, hash, prefix, created) VALUES (?, ?, ?, ?, ?)`,
		id, workspaceID, hash, prefix, s.Now())
	if isUnique(err) {
		return ErrConflict
	}
	return err
}

// WorkspaceByKeyHash finds the workspace of an unrevoked key.
func (s *Store) WorkspaceByKeyHash(ctx context.Context, hash string) (Workspace, error) {
	var w Workspace
	err := s.row(ctx, s.db, `SELECT w.id, w.name, w.performance_enabled, w.created
		FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
		WHERE k.hash = ? AND k.revoked IS NULL`, hash).
		Scan(&w.ID, &w.Name, &w.PerformanceEnabled, &w.Created)
	if errors.Is(err, sql.ErrNoRows) {
		return w, ErrNotFound
	}
	return w, err
}

// Wallet is a workspace's prepaid balance.
type Wallet struct {
	WorkspaceID    string
	BalanceMicros  int64
	ToppedUpMicros int64
}

// Wallet reads a workspace's wallet.
func (s *Store) Wallet(ctx context.Context, workspaceID string) (Wallet, error) {
	w := Wallet{WorkspaceID: workspaceID}
	err := s.row(ctx, s.db, `SELECT balance_micros, topped_up_micros FROM wallets WHERE workspace_id = ?`, workspaceID).
		Scan(&w.BalanceMicros, &w.ToppedUpMicros)
	if errors.Is(err, sql.ErrNoRows) {
		return w, ErrNotFound
	}
	return w, err
}

// Credit adds amount to a wallet as a top-up ledger entry. The idempotency
// key makes a retried credit a no-op; applied reports whether this call
// changed the balance.
func (s *Store) Credit(ctx context.Context, workspaceID string, amountMicros int64, idempotencyKey, note string) (applied bool, err error) {
	if amountMicros <= 0 {
		return false, fmt.Errorf("store: credit must be positive")
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		now := s.Now()
		var one int
		err := s.row(ctx, tx, `SELECT 1 FROM wallets WHERE workspace_id = ?`, workspaceID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		res, err := s.exec(ctx, tx, `INSERT INTO ledger (workspace_id, kind, amount_micros, idempotency_key, note, created)
			VALUES (?, 'top_up', ?, ?, ?, ?) ON CONFLICT (idempotency_key) DO NOTHING`,
			workspaceID, amountMicros, idempotencyKey, note, now)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		if _, err = s.exec(ctx, tx, `UPDATE wallets SET balance_micros = balance_micros + ?,
			topped_up_micros = topped_up_micros + ?, updated = ? WHERE workspace_id = ?`,
			amountMicros, amountMicros, now, workspaceID); err != nil {
			return err
		}
		applied = true
		return nil
	})
	return applied, err
}
