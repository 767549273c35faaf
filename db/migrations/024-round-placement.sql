-- db/migrations/024-round-placement.sql - a round that a few accounts
-- cannot capture, deadlines a hoarder cannot stretch. Each
-- statement may run again after a crash (IF NOT EXISTS).
--
-- result.sent_round is the round id of a replica, written when it is sent
-- (eligibility.c, beside sent_net). The scheduler's round rules read an
-- account's replicas of one round and a network's replicas of one round
-- along these two indexes: a few rows, bounded by the caps they enforce,
-- however much work is unsent or how large the round is.
ALTER TABLE result ADD COLUMN IF NOT EXISTS sent_round BIGINT NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS result_user_round ON result (userid, sent_round);
CREATE INDEX IF NOT EXISTS result_round_net ON result (sent_round, sent_net);

-- The accounts that asked for work lately (do enough volunteers ask for
-- the round rules to be satisfiable?), read from the newest RPCs and
-- stopping after the few accounts the rules need.
CREATE INDEX IF NOT EXISTS host_rpc_user ON host (rpc_time, userid);

-- request_delay enforced: the earliest time the host's next RPC may get
-- new work (now + the request_delay its last reply without work told it;
-- 0 after a reply that sent work).
ALTER TABLE host ADD COLUMN IF NOT EXISTS next_work_time BIGINT NOT NULL DEFAULT 0;
