-- db/migrations/022-status-counts.sql - queries that do not grow with the
-- project's history. Each statement may run again after a
-- crash (IF NOT EXISTS).
--
-- The status page: its result counts come from round_stat (kept by the
-- result triggers of 004); its "last 24 hours" figures read a range of
-- these two indexes instead of every credit event and host ever recorded.
CREATE INDEX IF NOT EXISTS credit_time ON credit_event (create_time);
CREATE INDEX IF NOT EXISTS host_rpc_time ON host (rpc_time);

-- The scheduler RPC: the work limits (worklimit.c: a host's results sent
-- in the last day, an account's results in progress and validated in the
-- last day) and the saver's pending count (sched.c) read a volunteer's
-- results by these, a range of the recent or unfinished ones, instead of
-- every result the host or account ever returned (bench/bench_dispatch:
-- 18 ms per RPC at 1k results of history, 144 ms at 100k before).
CREATE INDEX IF NOT EXISTS result_host_sent ON result (hostid, sent_time);
CREATE INDEX IF NOT EXISTS result_user_state ON result (userid, server_state);
CREATE INDEX IF NOT EXISTS result_user_valid ON result (userid, validate_state, sent_time);
