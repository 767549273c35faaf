-- 004: what the server needs to run real model sizes cheaply (issue 13).
--
-- job.eval_tokens: tokens each round's evaluation (base and averaged
-- model) is over; 0 = the server's default (daemons.eval_tokens).
-- round.eval_ntokens: the tokens the round's losses were actually over
-- (the eval file may be shorter), shown on the job page.
ALTER TABLE job ADD COLUMN eval_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE `round` ADD COLUMN eval_ntokens BIGINT NOT NULL DEFAULT 0;

-- What the validator learned from a result it checked, so that a result
-- is decoded (and probed) once: the hash of its decoded weights, its
-- update norm, probe loss and int8 error bound. Keyed by the result and
-- the hash of the upload it was computed from (a record for other bytes
-- is ignored). Rows go with their result (purge, file deleter).
CREATE TABLE result_check (
    resultid        BIGINT NOT NULL PRIMARY KEY,
    upload_sha256   CHAR(64) NOT NULL,
    weights_sha256  CHAR(64) NOT NULL,
    update_norm     DOUBLE NOT NULL,
    probe_loss      DOUBLE NOT NULL,
    quant_error     DOUBLE NOT NULL,
    check_time      BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
