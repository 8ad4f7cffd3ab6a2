package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
)

// Reason says why the last lifecycle operation failed.
type Reason struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Detail    string `json:"detail,omitempty"`
	Operation string `json:"operation"`
	At        int64  `json:"at"`
}

// Budget caps an instance's managed usage (micro-dollars).
type Budget struct {
	MonthlyCapMicros int64 `json:"monthly_cap_micros"`
	CreditMicros     int64 `json:"credit_micros"`
}

// Instance is one row of the instances table. Op is the lifecycle
// operation in flight ("" when idle): it is written before the runtime is
// touched, so after a crash the reconciler knows what to finish.
type Instance struct {
	ID               string
	WorkspaceID      string
	Status           string
	Op               string
	OpStarted        int64
	Reason           *Reason
	Template         string // as given, with its pin
	TemplateName     string
	TemplateScope    string
	TemplateRevision *int
	ImageRef         *string
	ImageDigest      string
	ImageRepo        string
	DefaultPort      int
	AgentType        string
	CPU              int
	Memory           int
	Disk             int
	Type             string
	User             *string
	Name             *string
	Metadata         json.RawMessage // nil when unset
	Env              map[string]string
	Budget           *Budget
	AutoSleep        bool
	IdleTimeout      int
	SleptAt          *int64
	PastDue          bool
	GatewayToken     string
	Created          int64
	Updated          int64
	Deleted          *int64
}

const instanceColumns = `id, workspace_id, status, op, op_started, status_reason, template, template_name,
	template_scope, template_revision, image_ref, image_digest, image_repo, default_port, agent_type,
	cpu, memory, disk, type, user_tag, name, metadata, env, budget, auto_sleep, idle_timeout, slept_at,
	past_due, gateway_token, created, updated, deleted`

func scanInstance(sc interface{ Scan(...any) error }) (Instance, error) {
	var in Instance
	var reason, metadata, budget sql.NullString
	var env string
	err := sc.Scan(&in.ID, &in.WorkspaceID, &in.Status, &in.Op, &in.OpStarted, &reason, &in.Template,
		&in.TemplateName, &in.TemplateScope, &in.TemplateRevision, &in.ImageRef, &in.ImageDigest, &in.ImageRepo,
		&in.DefaultPort, &in.AgentType, &in.CPU, &in.Memory, &in.Disk, &in.Type, &in.User, &in.Name,
		&metadata, &env, &budget, &in.AutoSleep, &in.IdleTimeout, &in.SleptAt, &in.PastDue, &in.GatewayToken,
		&in.Created, &in.Updated, &in.Deleted)
	if err != nil {
		return in, err
	}
	if reason.Valid {
		in.Reason = new(Reason)
		if err := json.Unmarshal([]byte(reason.String), in.Reason); err != nil {
			return in, err
		}
	}
	if metadata.Valid {
		in.Metadata = json.RawMessage(metadata.String)
	}
	if err := json.Unmarshal([]byte(env), &in.Env); err != nil {
		return in, err
	}
	if budget.Valid {
		in.Budget = new(Budget)
		if err := json.Unmarshal([]byte(budget.String), in.Budget); err != nil {
			return in, err
		}
	}
	return in, nil
}

func nullJSON(v any, isNil bool) (any, error) {
	if isNil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// values returns in's columns in instanceColumns order.
func (in Instance) values() ([]any, error) {
	reason, err := nullJSON(in.Reason, in.Reason == nil)
	if err != nil {
		return nil, err
	}
	var metadata any
	if in.Metadata != nil {
		metadata = string(in.Metadata)
	}
	env := in.Env
	if env == nil {
		env = map[string]string{}
	}
	envJSON, err := json.Marshal(env)
	if err != nil {
		return nil, err
	}
	budget, err := nullJSON(in.Budget, in.Budget == nil)
	if err != nil {
		return nil, err
	}
	return []any{in.ID, in.WorkspaceID, in.Status, in.Op, in.OpStarted, reason, in.Template, in.TemplateName,
		in.TemplateScope, in.TemplateRevision, in.ImageRef, in.ImageDigest, in.ImageRepo, in.DefaultPort, in.AgentType,
		in.CPU, in.Memory, in.Disk, in.Type, in.User, in.Name, metadata, string(envJSON), budget, in.AutoSleep,
		in.IdleTimeout, in.SleptAt, in.PastDue, in.GatewayToken, in.Created, in.Updated, in.Deleted}, nil
}

// CreateInstance inserts an instance and its public ports atomically.
func (s *Store) CreateInstance(ctx context.Context, in Instance, ports []PublicPort) error {
	vals, err := in.values()
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := s.exec(ctx, tx, `INSERT INTO instances (`+instanceColumns+`, created_ns)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			append(vals, s.now().UnixNano())...)
		if isUnique(err) {
			return ErrConflict
		}
		if err != nil {
			return err
		}
		for _, p := range ports {
			p.InstanceID = in.ID
			if err := s.insertPort(ctx, tx, p); err != nil {
				return err
			}
		}
		return nil
	})
}

// Instance reads a live (not deleted) instance by id, in any workspace.
func (s *Store) Instance(ctx context.Context, id string) (Instance, error) {
	return s.instance(ctx, s.db, id)
}

func (s *Store) instance(ctx context.Context, db q, id string) (Instance, error) {
	in, err := scanInstance(s.row(ctx, db, `SELECT `+instanceColumns+` FROM instances WHERE id = ? AND deleted IS NULL`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return in, ErrNotFound
	}
	return in, err
}

// Instances lists a workspace's live instances, newest first.
func (s *Store) Instances(ctx context.Context, ws string) ([]Instance, error) {
	return s.instances(ctx, `SELECT `+instanceColumns+` FROM instances
		WHERE workspace_id = ? AND deleted IS NULL ORDER BY created_ns DESC, id DESC`, ws)
}

// AllInstances lists every live instance of every workspace.
func (s *Store) AllInstances(ctx context.Context) ([]Instance, error) {
	return s.instances(ctx, `SELECT `+instanceColumns+` FROM instances WHERE deleted IS NULL ORDER BY created_ns`)
}

func (s *Store) instances(ctx context.Context, query string, args ...any) ([]Instance, error) {
	rows, err := s.query(ctx, s.db, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Instance
	for rows.Next() {
		in, err := scanInstance(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, rows.Err()
}

// MutateInstance reads a live instance, applies fn and writes the result,
// all in one transaction, so concurrent callers see each other's changes
// in order. fn's error aborts the change and is returned as is.
func (s *Store) MutateInstance(ctx context.Context, id string, fn func(*Instance) error) (Instance, error) {
	var out Instance
	err := s.tx(ctx, func(tx *sql.Tx) error {
		in, err := s.instance(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := fn(&in); err != nil {
			return err
		}
		in.Updated = s.Now()
		vals, err := in.values()
		if err != nil {
			return err
		}
		_, err = s.exec(ctx, tx, `UPDATE instances SET id = ?, workspace_id = ?, status = ?, op = ?, op_started = ?,
			status_reason = ?, template = ?, template_name = ?, template_scope = ?, template_revision = ?,
			image_ref = ?, image_digest = ?, image_repo = ?, default_port = ?, agent_type = ?, cpu = ?, memory = ?,
			disk = ?, type = ?, user_tag = ?, name = ?, metadata = ?, env = ?, budget = ?, auto_sleep = ?,
			idle_timeout = ?, slept_at = ?, past_due = ?, gateway_token = ?, created = ?, updated = ?, deleted = ?
			WHERE id = ?`, append(vals, id)...)
		if err != nil {
			return err
		}
		if in.Deleted != nil {
			// A deleted instance holds no public hostnames.
			if _, err := s.exec(ctx, tx, `DELETE FROM public_ports WHERE instance_id = ?`, id); err != nil {
				return err
			}
		}
		out = in
		return nil
	})
	return out, err
}
