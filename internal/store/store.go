// Package store is svc's persistence: SQLite by default (a pure-Go driver)
// and PostgreSQL for several replicas, behind one concrete Store whose
// queries are written once with ? placeholders and rebound per dialect.
// Migrations are goose files, one set per dialect. Every state change is a
// transaction; read-modify-write of an instance goes through
// MutateInstance, which locks the row for the length of the change.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite"
)

// ErrNotFound is returned when a row does not exist.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned when a unique key is taken.
var ErrConflict = errors.New("conflict")

//go:embed migrations
var migrations embed.FS

type dialect int

const (
	sqlite dialect = iota
	postgres
)

// Store is the database of one svc installation.
type Store struct {
	db      *sql.DB
	dialect dialect
	now     func() time.Time
}

// Open opens (and migrates) the database named by dsn: a file path or
// "sqlite:PATH" for SQLite, "postgres://..." for PostgreSQL.
func Open(ctx context.Context, dsn string) (*Store, error) {
	var s *Store
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return nil, fmt.Errorf("store: PostgreSQL is not supported yet")
	default:
		path := strings.TrimPrefix(dsn, "sqlite:")
		// _txlock=immediate takes the write lock at BEGIN, so two writers
		// queue on busy_timeout instead of failing on lock upgrade.
		db, err := sql.Open("sqlite", "file:"+path+
			"?_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"+
			"&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)")
		if err != nil {
			return nil, err
		}
		s = &Store{db: db, dialect: sqlite}
	}
	s.now = time.Now
	if err := s.migrate(ctx); err != nil {
		s.db.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) migrate(ctx context.Context) error {
	dir, name := "migrations/sqlite", goose.DialectSQLite3
	if s.dialect == postgres {
		dir, name = "migrations/postgres", goose.DialectPostgres
	}
	sub, err := fs.Sub(migrations, dir)
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(name, s.db, sub)
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Now is the store's clock in epoch seconds.
func (s *Store) Now() int64 { return s.now().Unix() }

// q is what both *sql.DB and *sql.Tx offer.
type q interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// rebind turns ? placeholders into $1, $2 ... for PostgreSQL.
func (s *Store) rebind(query string) string {
	if s.dialect != postgres {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (s *Store) exec(ctx context.Context, db q, query string, args ...any) (sql.Result, error) {
	return db.ExecContext(ctx, s.rebind(query), args...)
}

func (s *Store) query(ctx context.Context, db q, query string, args ...any) (*sql.Rows, error) {
	return db.QueryContext(ctx, s.rebind(query), args...)
}

func (s *Store) row(ctx context.Context, db q, query string, args ...any) *sql.Row {
	return db.QueryRowContext(ctx, s.rebind(query), args...)
}

// tx runs fn in a transaction, committing when it returns nil.
func (s *Store) tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// isUnique reports whether err is a unique-constraint violation.
func isUnique(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "UNIQUE constraint failed") || // SQLite
		strings.Contains(msg, "duplicate key value") // PostgreSQL
}

// Meta reads an installation-wide setting; "" when unset.
func (s *Store) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := s.row(ctx, s.db, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// SetMetaOnce stores value under key unless the key is set, and returns the
// stored value either way (so concurrent first starts agree).
func (s *Store) SetMetaOnce(ctx context.Context, key, value string) (string, error) {
	if _, err := s.exec(ctx, s.db, `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`, key, value); err != nil {
		return "", err
	}
	return s.Meta(ctx, key)
}

// SetMeta stores value under key, replacing any earlier value.
func (s *Store) SetMeta(ctx context.Context, key, value string) error {
	_, err := s.exec(ctx, s.db, `INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	return err
}
