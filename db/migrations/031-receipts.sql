-- db/migrations/031-receipts.sql - each round's signed receipt (doc/receipts.md,
-- daemons/receipt.h). The receipt itself is a file of the
-- content store (kind 'receipt', kept forever), named by its SHA-256; this
-- row says which file is round idx's of job jobid. Rows are inserted once
-- (INSERT IGNORE) and never updated: a receipt is never rewritten. purge
-- leaves them (and the rounds) in place. Each statement may run again
-- after a crash (IF NOT EXISTS).
CREATE TABLE IF NOT EXISTS round_receipt (
    roundid         BIGINT NOT NULL PRIMARY KEY,
    jobid           BIGINT NOT NULL,
    idx             INT NOT NULL,
    sha256          CHAR(64) NOT NULL,
    size            BIGINT NOT NULL,
    create_time     BIGINT NOT NULL,
    UNIQUE KEY receipt_job_idx (jobid, idx)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
