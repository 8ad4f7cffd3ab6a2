-- +goose Up
-- One row per call an instance made to the managed model; metering and
-- budgets (a later change) are computed from these rows.
CREATE TABLE model_calls (
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	instance_id   TEXT NOT NULL,
	workspace_id  TEXT NOT NULL,
	model         TEXT NOT NULL,
	purpose       TEXT NOT NULL DEFAULT '',
	status        INTEGER NOT NULL,
	input_tokens  INTEGER NOT NULL DEFAULT 0,
	output_tokens INTEGER NOT NULL DEFAULT 0,
	created       INTEGER NOT NULL
);
CREATE INDEX model_calls_instance ON model_calls(instance_id, created);

-- +goose Down
DROP TABLE model_calls;
