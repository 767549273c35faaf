-- db/migrations/037-hash-chain.sql - the hash chain of every result and the
-- disputes settled by bisection (doc/workunit.md §14, doc/validation.md
-- "Disputes settled by bisection"). May run again (IF NOT EXISTS).

-- A job's chain interval S (lib/ct_chain.h), chosen at submission from the
-- model's size so that the links cost at most 1% of a WU; the scheduler
-- sends it with every WU. 0 for a job from before this column: no chain.
ALTER TABLE job ADD COLUMN IF NOT EXISTS chain_every INT NOT NULL DEFAULT 0;

-- The chain a client reported with a successful result: its links in hex,
-- back to back (64 digits a link, at most 128 links), as reported, not yet
-- checked (the validator checks it against the result's hash).
CREATE TABLE IF NOT EXISTS result_chain (
    resultid        BIGINT NOT NULL PRIMARY KEY,
    links           VARCHAR(8192) CHARACTER SET ascii NOT NULL
) ENGINE=InnoDB;

-- A dispute between two replicas of a WU whose chains part at link
-- `link` (0-based): the agreed state after step `step` (digest
-- agreed_sha256, the link before) is asked of the host of result
-- `resultid`, which uploads it (at most max_bytes) to
-- /upload/<result name>.state until `deadline`.
-- status: 0 asked, 1 uploaded (upload_sha256), 2 settled, 3 expired (the
-- WU fell back to a third replica). One row per WU.
CREATE TABLE IF NOT EXISTS state_request (
    workunitid      BIGINT NOT NULL PRIMARY KEY,
    resultid        BIGINT NOT NULL,
    hostid          BIGINT NOT NULL,
    other_resultid  BIGINT NOT NULL,
    link            INT NOT NULL,
    step            INT NOT NULL,
    agreed_sha256   CHAR(64) CHARACTER SET ascii NOT NULL,
    status          INT NOT NULL DEFAULT 0,
    create_time     BIGINT NOT NULL,
    deadline        BIGINT NOT NULL,
    max_bytes       BIGINT NOT NULL,
    upload_sha256   CHAR(64) CHARACTER SET ascii NOT NULL DEFAULT '',
    upload_size     BIGINT NOT NULL DEFAULT 0,
    KEY state_request_host (hostid, status)
) ENGINE=InnoDB;
