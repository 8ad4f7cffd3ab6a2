-- +goose Up
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);

CREATE TABLE workspaces (
	id                  TEXT PRIMARY KEY,
	name                TEXT NOT NULL,
	performance_enabled INTEGER NOT NULL DEFAULT 0,
	created             INTEGER NOT NULL
);

CREATE TABLE api_keys (
	id           TEXT PRIMARY KEY,
	workspace_id TEXT NOT NULL REFERENCES workspaces(id),
	hash         TEXT NOT NULL UNIQUE,
	prefix       TEXT NOT NULL,
	created      INTEGER NOT NULL,
	revoked      INTEGER
);

-- Money is integer micro-dollars. Every change of a balance is a ledger
-- entry with an idempotency key, so a retry never applies twice.
CREATE TABLE wallets (
	workspace_id   TEXT PRIMARY KEY REFERENCES workspaces(id),
	balance_micros INTEGER NOT NULL DEFAULT 0,
	topped_up_micros INTEGER NOT NULL DEFAULT 0,
	updated        INTEGER NOT NULL
);

CREATE TABLE ledger (
	id              INTEGER PRIMARY KEY AUTOINCREMENT,
	workspace_id    TEXT NOT NULL REFERENCES workspaces(id),
	kind            TEXT NOT NULL,
	amount_micros   INTEGER NOT NULL,
	idempotency_key TEXT NOT NULL UNIQUE,
	note            TEXT NOT NULL DEFAULT '',
	created         INTEGER NOT NULL
);

CREATE TABLE templates (
	workspace_id TEXT NOT NULL REFERENCES workspaces(id),
	name         TEXT NOT NULL,
	description  TEXT NOT NULL DEFAULT '',
	default_port INTEGER NOT NULL DEFAULT 0,
	revision     INTEGER NOT NULL,
	created      INTEGER NOT NULL,
	updated      INTEGER NOT NULL,
	PRIMARY KEY (workspace_id, name)
);

CREATE TABLE template_revisions (
	workspace_id TEXT NOT NULL,
	name         TEXT NOT NULL,
	revision     INTEGER NOT NULL,
	image_ref    TEXT,
	image_digest TEXT NOT NULL,
	repo         TEXT NOT NULL,
	size_bytes   INTEGER NOT NULL DEFAULT 0,
	created      INTEGER NOT NULL,
	PRIMARY KEY (workspace_id, name, revision),
	FOREIGN KEY (workspace_id, name) REFERENCES templates(workspace_id, name) ON DELETE CASCADE
);

-- Dated releases of the system templates' images, published by make images.
CREATE TABLE system_releases (
	name         TEXT NOT NULL,
	tag          TEXT NOT NULL,
	image_ref    TEXT NOT NULL,
	image_digest TEXT NOT NULL,
	repo         TEXT NOT NULL,
	created      INTEGER NOT NULL,
	PRIMARY KEY (name, tag)
);

CREATE TABLE instances (
	id                TEXT PRIMARY KEY,
	workspace_id      TEXT NOT NULL REFERENCES workspaces(id),
	status            TEXT NOT NULL,
	op                TEXT NOT NULL DEFAULT '',
	op_started        INTEGER NOT NULL DEFAULT 0,
	status_reason     TEXT,
	template          TEXT NOT NULL,
	template_name     TEXT NOT NULL,
	template_scope    TEXT NOT NULL,
	template_revision INTEGER,
	image_ref         TEXT,
	image_digest      TEXT NOT NULL DEFAULT '',
	image_repo        TEXT NOT NULL DEFAULT '',
	default_port      INTEGER NOT NULL DEFAULT 0,
	agent_type        TEXT NOT NULL DEFAULT '',
	cpu               INTEGER NOT NULL,
	memory            INTEGER NOT NULL,
	disk              INTEGER NOT NULL,
	type              TEXT NOT NULL,
	user_tag          TEXT,
	name              TEXT,
	metadata          TEXT,
	env               TEXT NOT NULL DEFAULT '{}',
	budget            TEXT,
	auto_sleep        INTEGER NOT NULL DEFAULT 0,
	idle_timeout      INTEGER NOT NULL DEFAULT 900,
	slept_at          INTEGER,
	past_due          INTEGER NOT NULL DEFAULT 0,
	gateway_token     TEXT NOT NULL DEFAULT '',
	created           INTEGER NOT NULL,
	-- created_ns orders instances made within the same second.
	created_ns        INTEGER NOT NULL DEFAULT 0,
	updated           INTEGER NOT NULL,
	deleted           INTEGER
);
CREATE INDEX instances_workspace ON instances(workspace_id, created_ns);

CREATE TABLE public_ports (
	instance_id TEXT NOT NULL REFERENCES instances(id),
	port        INTEGER NOT NULL,
	hostname    TEXT NOT NULL UNIQUE,
	prefix      TEXT,
	label       TEXT,
	created     INTEGER NOT NULL,
	PRIMARY KEY (instance_id, port)
);

-- +goose Down
DROP TABLE public_ports;
DROP TABLE instances;
DROP TABLE system_releases;
DROP TABLE template_revisions;
DROP TABLE templates;
DROP TABLE ledger;
DROP TABLE wallets;
DROP TABLE api_keys;
DROP TABLE workspaces;
DROP TABLE meta;
