// Package session persists the built-in agents' conversations in SQLite:
// one row per session (title, preview, counts, general-b's model and
// thinking level) and one per transcript message, with the exact chat
// messages the model saw kept beside each visible message so the next turn
// replays tool calls and results faithfully.
package session

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Store is one harness's session database.
type Store struct {
	db *sql.DB
}

const schema = `
CREATE TABLE IF NOT EXISTS sessions (
	key           INTEGER PRIMARY KEY,
	id            TEXT    NOT NULL,
	title         TEXT,
	preview       TEXT,
	model         TEXT    NOT NULL DEFAULT '',
	thinking      TEXT    NOT NULL DEFAULT '',
	created_at    INTEGER NOT NULL,
	last_active   INTEGER NOT NULL,
	message_count INTEGER NOT NULL DEFAULT 0,
	archived_at   INTEGER
);
-- Archived sessions keep their rows, so ids and titles are unique among
-- live sessions only: a deleted id can start a fresh thread.
CREATE UNIQUE INDEX IF NOT EXISTS sessions_live_id ON sessions(id) WHERE archived_at IS NULL;
CREATE UNIQUE INDEX IF NOT EXISTS sessions_live_title ON sessions(title) WHERE archived_at IS NULL AND title IS NOT NULL;
CREATE INDEX IF NOT EXISTS sessions_recent ON sessions(last_active DESC) WHERE archived_at IS NULL;
CREATE TABLE IF NOT EXISTS messages (
	id          INTEGER PRIMARY KEY,
	session_key INTEGER NOT NULL REFERENCES sessions(key) ON DELETE CASCADE,
	role        TEXT    NOT NULL,
	content     TEXT    NOT NULL,
	thinking    TEXT    NOT NULL DEFAULT '',
	replay      TEXT,
	created_at  INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_session ON messages(session_key, id);
PRAGMA user_version = 1;
`

// Open opens (creating) the database at path. WAL lets session lists read
// while a turn writes; the busy timeout and immediate transactions make
// concurrent turns queue instead of failing with SQLITE_BUSY.
func Open(path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)" +
		"&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(8)
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("session store %s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Session is one live session row.
type Session struct {
	Key          int64
	ID           string
	Title        *string
	Preview      *string
	Model        string
	Thinking     string
	CreatedAt    int64
	LastActive   int64
	MessageCount int64
}

const sessionCols = `key, id, title, preview, model, thinking, created_at, last_active, message_count`

func scanSession(row interface{ Scan(...any) error }) (*Session, error) {
	var s Session
	var title, preview sql.NullString
	if err := row.Scan(&s.Key, &s.ID, &title, &preview, &s.Model, &s.Thinking, &s.CreatedAt, &s.LastActive, &s.MessageCount); err != nil {
		return nil, err
	}
	if title.Valid {
		s.Title = &title.String
	}
	if preview.Valid {
		s.Preview = &preview.String
	}
	return &s, nil
}

// Get returns the live session id, or nil.
func (s *Store) Get(ctx context.Context, id string) (*Session, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ? AND archived_at IS NULL`, id)
	sess, err := scanSession(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return sess, err
}

// Ensure returns the live session id, creating it with the given model and
// thinking level when it does not exist.
func (s *Store) Ensure(ctx context.Context, id, model, thinking string, now int64) (*Session, error) {
	_, err := s.db.ExecContext(ctx, `INSERT INTO sessions (id, model, thinking, created_at, last_active)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) WHERE archived_at IS NULL DO NOTHING`, id, model, thinking, now, now)
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, id)
}

// SetModel records a live session's model (general-b's sticky model).
func (s *Store) SetModel(ctx context.Context, id, model string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE sessions SET model = ? WHERE id = ? AND archived_at IS NULL`, model, id)
	return err
}

// List returns up to limit live sessions, most recently active first.
func (s *Store) List(ctx context.Context, limit int) ([]Session, error) {
	// Activity times are milliseconds, and two quick turns can share one:
	// then the session whose last message was written later is the more
	// recent.
	rows, err := s.db.QueryContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE archived_at IS NULL
		ORDER BY last_active DESC, (SELECT MAX(m.id) FROM messages m WHERE m.session_key = sessions.key) DESC, key DESC
		LIMIT ?`, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *sess)
	}
	return out, rows.Err()
}

// ErrTitleTaken is returned when another live session has the title.
var ErrTitleTaken = errors.New("title used by another session")

func isUnique(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}

// Rename sets a live session's title; false when no session matched.
func (s *Store) Rename(ctx context.Context, id, title string) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE sessions SET title = ? WHERE id = ? AND archived_at IS NULL`, title, id)
	if isUnique(err) {
		return false, ErrTitleTaken
	}
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// SetGeneratedTitle gives an untitled session title, or "title (2)",
// "title (3)", ... (the lowest free number) when taken. A title the user
// set meanwhile wins. It returns the title stored, or "" when none was.
func (s *Store) SetGeneratedTitle(ctx context.Context, id, title string) (string, error) {
	for range 5 { // a concurrent rename can take the chosen title; look again
		t, err := s.freeTitle(ctx, title)
		if err != nil {
			return "", err
		}
		res, err := s.db.ExecContext(ctx, `UPDATE sessions SET title = ? WHERE id = ? AND archived_at IS NULL AND title IS NULL`, t, id)
		if isUnique(err) {
			continue
		}
		if err != nil {
			return "", err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return "", nil
		}
		return t, nil
	}
	return "", fmt.Errorf("no free title like %q", title)
}

// freeTitle is title, or title with the lowest free " (n)" suffix, found
// with one query however many sessions share the title.
func (s *Store) freeTitle(ctx context.Context, title string) (string, error) {
	esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(title)
	rows, err := s.db.QueryContext(ctx, `SELECT title FROM sessions WHERE archived_at IS NULL
		AND (title = ? OR title LIKE ? ESCAPE '\')`, title, esc+" (%)")
	if err != nil {
		return "", err
	}
	defer rows.Close()
	used := map[int]bool{}
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return "", err
		}
		if t == title {
			used[1] = true
		} else if n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(t, title+" ("), ")")); err == nil {
			used[n] = true
		}
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	n := 1
	for used[n] {
		n++
	}
	if n == 1 {
		return title, nil
	}
	return fmt.Sprintf("%s (%d)", title, n), nil
}

// Delete removes a live session and its transcript; false when none.
func (s *Store) Delete(ctx context.Context, id string) (bool, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM sessions WHERE id = ? AND archived_at IS NULL`, id)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// Archive takes a live session out of the list and out of reach by id,
// keeping its rows on disk; false when none.
func (s *Store) Archive(ctx context.Context, id string, now int64) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE sessions SET archived_at = ? WHERE id = ? AND archived_at IS NULL`, now, id)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// Preview is the opening of a first user message, on one line.
func Preview(input string) string {
	s := strings.Join(strings.Fields(input), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "…"
	}
	return s
}
