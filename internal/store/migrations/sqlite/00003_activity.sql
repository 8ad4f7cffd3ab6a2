-- +goose Up
-- The newest traffic or exec an edge or API process saw for an instance,
-- in epoch milliseconds. Each process keeps activity in memory and writes
-- it here every few seconds (never per request), so the idle watcher sees
-- the traffic of every edge process.
CREATE TABLE instance_activity (
	instance_id TEXT PRIMARY KEY,
	last_ms     INTEGER NOT NULL
);

-- +goose Down
DROP TABLE instance_activity;
