package store

import (
	"context"
	"database/sql"
	"errors"
)

// PublicPort is an unauthenticated hostname for one port of an instance.
type PublicPort struct {
	InstanceID string
	Port       int
	Hostname   string // the DNS label under the apps domain
	Prefix     *string
	Label      *string
	Created    int64
}

// ErrPortExists is returned when the instance already has the port public.
var ErrPortExists = errors.New("public port exists")

func (s *Store) insertPort(ctx context.Context, db q, p PublicPort) error {
	if p.Created == 0 {
		p.Created = s.Now()
	}
	_, err := s.exec(ctx, db, `INSERT INTO public_ports (instance_id, port, hostname, prefix, label, created)
		VALUES (?, ?, ?, ?, ?, ?)`, p.InstanceID, p.Port, p.Hostname, p.Prefix, p.Label, p.Created)
	if isUnique(err) {
		// The port was checked by the caller: the hostname is taken (the
		// same prefix on another port of the instance).
		return ErrHostTaken
	}
	return err
}

// ErrHostTaken is returned when a public hostname is in use.
var ErrHostTaken = errors.New("public hostname in use")

// AddPublicPort adds a port to a live instance, keeping the per-instance
// cap in the same transaction so concurrent adds cannot exceed it.
func (s *Store) AddPublicPort(ctx context.Context, p PublicPort, max int) (PublicPort, error) {
	if p.Created == 0 {
		p.Created = s.Now()
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := s.instance(ctx, tx, p.InstanceID); err != nil {
			return err
		}
		var n int
		if err := s.row(ctx, tx, `SELECT COUNT(*) FROM public_ports WHERE instance_id = ?`, p.InstanceID).Scan(&n); err != nil {
			return err
		}
		var exists int
		if err := s.row(ctx, tx, `SELECT COUNT(*) FROM public_ports WHERE instance_id = ? AND port = ?`, p.InstanceID, p.Port).Scan(&exists); err != nil {
			return err
		}
		if exists > 0 {
			return ErrPortExists
		}
		if n >= max {
			return ErrLimit
		}
		return s.insertPort(ctx, tx, p)
	})
	return p, err
}

// ErrLimit is returned when a per-instance cap is reached.
var ErrLimit = errors.New("limit reached")

// PublicPorts lists an instance's public ports by port.
func (s *Store) PublicPorts(ctx context.Context, instanceID string) ([]PublicPort, error) {
	return s.ports(ctx, `SELECT instance_id, port, hostname, prefix, label, created FROM public_ports
		WHERE instance_id = ? ORDER BY port`, instanceID)
}

// PublicPortsOf lists the public ports of several instances at once.
func (s *Store) PublicPortsOf(ctx context.Context, workspaceID string) (map[string][]PublicPort, error) {
	ports, err := s.ports(ctx, `SELECT p.instance_id, p.port, p.hostname, p.prefix, p.label, p.created
		FROM public_ports p JOIN instances i ON i.id = p.instance_id
		WHERE i.workspace_id = ? AND i.deleted IS NULL ORDER BY p.port`, workspaceID)
	if err != nil {
		return nil, err
	}
	out := map[string][]PublicPort{}
	for _, p := range ports {
		out[p.InstanceID] = append(out[p.InstanceID], p)
	}
	return out, nil
}

// PublicPortByHost finds the port served at a hostname label.
func (s *Store) PublicPortByHost(ctx context.Context, hostname string) (PublicPort, error) {
	ports, err := s.ports(ctx, `SELECT instance_id, port, hostname, prefix, label, created FROM public_ports
		WHERE hostname = ?`, hostname)
	if err != nil {
		return PublicPort{}, err
	}
	if len(ports) == 0 {
		return PublicPort{}, ErrNotFound
	}
	return ports[0], nil
}

// DeletePublicPort removes one public port.
func (s *Store) DeletePublicPort(ctx context.Context, instanceID string, port int) error {
	res, err := s.exec(ctx, s.db, `DELETE FROM public_ports WHERE instance_id = ? AND port = ?`, instanceID, port)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

func (s *Store) ports(ctx context.Context, query string, args ...any) ([]PublicPort, error) {
	rows, err := s.query(ctx, s.db, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PublicPort
	for rows.Next() {
		var p PublicPort
		if err := rows.Scan(&p.InstanceID, &p.Port, &p.Hostname, &p.Prefix, &p.Label, &p.Created); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
