-- db/migrations/048-result-indexes.sql - fewer secondary indexes on
-- result for a send, a report and an INSERT to change. InnoDB writes every
-- index whose columns a statement changes: a send moved 12 of them, a
-- report 7, the transitioner's INSERT 16. The four below served nothing
-- another index does not serve as well. May run again (IF EXISTS).
--
-- result_host (hostid, server_state): a host's results in progress (the
-- caps' count, the lost results) read result_host_task by task_state 1,
-- which is server_state 4 and nothing else (result_state.h: in progress
-- is the only state with server_state 4, its outcome is init); a host's
-- other results by hostid alone read another (hostid, ...) index.
-- result_user_state (userid, server_state): an account's results in
-- progress read result_user_task by task_state 1, and its pending ones
-- (the standing) by task_state 2, the same rule, instead of every result
-- the account ever returned (server_state 5).
-- result_job (jobid): a prefix of result_job_valid (jobid,
-- validate_state, id).
-- result_wu_user (workunitid, userid): no statement looks a result up by
-- its WU and account; the WU's results by workunitid alone, now
-- result_wu, which a send (userid 0 to the account) leaves alone.
DROP INDEX IF EXISTS result_host ON result;
DROP INDEX IF EXISTS result_user_state ON result;
DROP INDEX IF EXISTS result_job ON result;
CREATE INDEX IF NOT EXISTS result_wu ON result (workunitid);
DROP INDEX IF EXISTS result_wu_user ON result;
