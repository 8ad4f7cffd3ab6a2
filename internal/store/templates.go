package store

import (
	"context"
	"database/sql"
	"errors"
)

// Template is a workspace template; its images are its revisions.
type Template struct {
	WorkspaceID string
	Name        string
	Description string
	DefaultPort int // 0: none
	Revision    int // the latest published revision
	Created     int64
	Updated     int64
}

// Revision is one published image of a workspace template.
type Revision struct {
	Revision    int
	ImageRef    *string // nil for build-published images
	ImageDigest string
	Repo        string // repository in private storage
	SizeBytes   int64
	Created     int64
}

// CreateTemplate inserts a template with its first revision.
func (s *Store) CreateTemplate(ctx context.Context, t Template, rev Revision) (Template, error) {
	now := s.Now()
	t.Created, t.Updated, t.Revision = now, now, 1
	rev.Revision, rev.Created = 1, now
	err := s.tx(ctx, func(tx *sql.Tx) error {
		_, err := s.exec(ctx, tx, `INSERT INTO templates (workspace_id, name, description, default_port, revision, created, updated)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, t.WorkspaceID, t.Name, t.Description, t.DefaultPort, t.Revision, now, now)
		if isUnique(err) {
			return ErrConflict
		}
		if err != nil {
			return err
		}
		return s.insertRevision(ctx, tx, t.WorkspaceID, t.Name, rev)
	})
	return t, err
}

func (s *Store) insertRevision(ctx context.Context, db q, ws, name string, rev Revision) error {
	_, err := s.exec(ctx, db, `INSERT INTO template_revisions (workspace_id, name, revision, image_ref, image_digest, repo, size_bytes, created)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, ws, name, rev.Revision, rev.ImageRef, rev.ImageDigest, rev.Repo, rev.SizeBytes, rev.Created)
	return err
}

// TemplateChange is a PATCH of a template: nil fields are kept. A non-nil
// Publish appends a revision.
type TemplateChange struct {
	Description *string
	DefaultPort *int
	Publish     *Revision
}

// UpdateTemplate applies a change in one transaction.
func (s *Store) UpdateTemplate(ctx context.Context, ws, name string, c TemplateChange) (Template, error) {
	var t Template
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		if t, err = s.template(ctx, tx, ws, name); err != nil {
			return err
		}
		now := s.Now()
		if c.Description != nil {
			t.Description = *c.Description
		}
		if c.DefaultPort != nil {
			t.DefaultPort = *c.DefaultPort
		}
		if c.Publish != nil {
			rev := *c.Publish
			t.Revision++
			rev.Revision, rev.Created = t.Revision, now
			if err := s.insertRevision(ctx, tx, ws, name, rev); err != nil {
				return err
			}
		}
		t.Updated = now
		_, err = s.exec(ctx, tx, `UPDATE templates SET description = ?, default_port = ?, revision = ?, updated = ?
			WHERE workspace_id = ? AND name = ?`, t.Description, t.DefaultPort, t.Revision, t.Updated, ws, name)
		return err
	})
	return t, err
}

// Template reads one workspace template.
func (s *Store) Template(ctx context.Context, ws, name string) (Template, error) {
	return s.template(ctx, s.db, ws, name)
}

func (s *Store) template(ctx context.Context, db q, ws, name string) (Template, error) {
	t := Template{WorkspaceID: ws}
	err := s.row(ctx, db, `SELECT name, description, default_port, revision, created, updated
		FROM templates WHERE workspace_id = ? AND name = ?`, ws, name).
		Scan(&t.Name, &t.Description, &t.DefaultPort, &t.Revision, &t.Created, &t.Updated)
	if errors.Is(err, sql.ErrNoRows) {
		return t, ErrNotFound
	}
	return t, err
}

// Templates lists a workspace's templates by name.
func (s *Store) Templates(ctx context.Context, ws string) ([]Template, error) {
	rows, err := s.query(ctx, s.db, `SELECT name, description, default_port, revision, created, updated
		FROM templates WHERE workspace_id = ? ORDER BY name`, ws)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Template
	for rows.Next() {
		t := Template{WorkspaceID: ws}
		if err := rows.Scan(&t.Name, &t.Description, &t.DefaultPort, &t.Revision, &t.Created, &t.Updated); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Revisions lists a template's revisions, newest first.
func (s *Store) Revisions(ctx context.Context, ws, name string) ([]Revision, error) {
	rows, err := s.query(ctx, s.db, `SELECT revision, image_ref, image_digest, repo, size_bytes, created
		FROM template_revisions WHERE workspace_id = ? AND name = ? ORDER BY revision DESC`, ws, name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Revision
	for rows.Next() {
		var r Revision
		if err := rows.Scan(&r.Revision, &r.ImageRef, &r.ImageDigest, &r.Repo, &r.SizeBytes, &r.Created); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// TemplateRevision reads one revision.
func (s *Store) TemplateRevision(ctx context.Context, ws, name string, revision int) (Revision, error) {
	var r Revision
	err := s.row(ctx, s.db, `SELECT revision, image_ref, image_digest, repo, size_bytes, created
		FROM template_revisions WHERE workspace_id = ? AND name = ? AND revision = ?`, ws, name, revision).
		Scan(&r.Revision, &r.ImageRef, &r.ImageDigest, &r.Repo, &r.SizeBytes, &r.Created)
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNotFound
	}
	return r, err
}

// DeleteTemplate removes a template and its revisions. Instances keep the
// digests they run.
func (s *Store) DeleteTemplate(ctx context.Context, ws, name string) error {
	res, err := s.exec(ctx, s.db, `DELETE FROM templates WHERE workspace_id = ? AND name = ?`, ws, name)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// Release is one dated image of a system template.
type Release struct {
	Name        string
	Tag         string
	ImageRef    string
	ImageDigest string
	Repo        string
	Created     int64
}

// PublishRelease records a system template image under a dated tag. Tags
// are immutable: publishing an existing tag is ErrConflict.
func (s *Store) PublishRelease(ctx context.Context, r Release) error {
	if r.Created == 0 {
		r.Created = s.Now()
	}
	_, err := s.exec(ctx, s.db, `INSERT INTO system_releases (name, tag, image_ref, image_digest, repo, created)
		VALUES (?, ?, ?, ?, ?, ?)`, r.Name, r.Tag, r.ImageRef, r.ImageDigest, r.Repo, r.Created)
	if isUnique(err) {
		return ErrConflict
	}
	return err
}

// LatestRelease is the newest release of a system template.
func (s *Store) LatestRelease(ctx context.Context, name string) (Release, error) {
	return s.release(ctx, `SELECT name, tag, image_ref, image_digest, repo, created FROM system_releases
		WHERE name = ? ORDER BY created DESC, tag DESC LIMIT 1`, name)
}

// ReleaseByTag reads one release of a system template.
func (s *Store) ReleaseByTag(ctx context.Context, name, tag string) (Release, error) {
	return s.release(ctx, `SELECT name, tag, image_ref, image_digest, repo, created FROM system_releases
		WHERE name = ? AND tag = ?`, name, tag)
}

func (s *Store) release(ctx context.Context, query string, args ...any) (Release, error) {
	var r Release
	err := s.row(ctx, s.db, query, args...).Scan(&r.Name, &r.Tag, &r.ImageRef, &r.ImageDigest, &r.Repo, &r.Created)
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNotFound
	}
	return r, err
}

// Releases lists a system template's releases, newest first.
func (s *Store) Releases(ctx context.Context, name string) ([]Release, error) {
	rows, err := s.query(ctx, s.db, `SELECT name, tag, image_ref, image_digest, repo, created FROM system_releases
		WHERE name = ? ORDER BY created DESC, tag DESC`, name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Release
	for rows.Next() {
		var r Release
		if err := rows.Scan(&r.Name, &r.Tag, &r.ImageRef, &r.ImageDigest, &r.Repo, &r.Created); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
