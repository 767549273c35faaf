-- db/migrations/015-status-counts.sql - the status page without scans
-- that grow with the project's history (issue 13). Its result counts come
-- from round_stat (kept by the result triggers of 004); its "last 24
-- hours" figures read a range of these indexes instead of every credit
-- event and host ever recorded. Each statement may run again after a
-- crash (IF NOT EXISTS).
CREATE INDEX IF NOT EXISTS credit_time ON credit_event (create_time);
CREATE INDEX IF NOT EXISTS host_rpc_time ON host (rpc_time);
