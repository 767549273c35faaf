-- 007: instances. role_heartbeat.instance is now the instance
-- name (`run --instance`, the config's `instance` or the host name), and
-- the row says which process beats it. A clean stop deletes the rows of
-- its instance; rows of the old "<host>:<pid>" form are from processes
-- that are gone.
ALTER TABLE role_heartbeat ADD COLUMN host VARCHAR(64) NOT NULL DEFAULT '';
ALTER TABLE role_heartbeat ADD COLUMN pid BIGINT NOT NULL DEFAULT 0;
DELETE FROM role_heartbeat;
