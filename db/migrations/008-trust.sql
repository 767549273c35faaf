-- db/migrations/008-trust.sql - what the cross-shard check decided
-- (server/validate/robust_aside.c, doc/validation.md "Cross-shard check"). Each
-- statement may run again after a crash (IF NOT EXISTS).
--
-- One row per decision about a round's canonical result: set aside (its
-- WU re-issued to other hosts) or accepted although an outlier (its WU was
-- set aside daemons.robust_max_reissue times already: honest but unusual
-- data must not stall the job). The job page lists them; the count of
-- set-asides per WU is the stall guard.
CREATE TABLE IF NOT EXISTS robust_event (
    id              BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    create_time     BIGINT NOT NULL,
    jobid           BIGINT NOT NULL,
    round_idx       INT NOT NULL,
    shard           INT NOT NULL,
    workunitid      BIGINT NOT NULL,
    resultid        BIGINT NOT NULL,         -- the canonical result judged
    hostid          BIGINT NOT NULL,
    action          TINYINT NOT NULL,        -- 1 set aside, 2 accepted, 3 caught host
    cosine          DOUBLE NOT NULL,
    ratio           DOUBLE NOT NULL,
    KEY robust_event_job (jobid),
    KEY robust_event_wu (workunitid)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
