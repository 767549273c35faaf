-- 004: what the server needs to run real model sizes cheaply.
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

-- Result counts per round, kept as results change state (triggers below),
-- so the job page reads one row per round instead of counting every
-- result of the job. Rows are never decremented by a DELETE: a purged
-- (archived) result still counts in its round's history.
--   n_unsent       server_state = 2 (unsent)
--   n_in_progress  server_state = 4 (in progress)
--   n_valid        validate_state = 1
--   n_invalid      validate_state = 2
--   n_error        server_state = 5 (over) AND outcome NOT IN (1, 7)
--   credit         SUM(granted_credit)
CREATE TABLE round_stat (
    roundid         BIGINT NOT NULL PRIMARY KEY,
    jobid           BIGINT NOT NULL,
    n_unsent        BIGINT NOT NULL DEFAULT 0,
    n_in_progress   BIGINT NOT NULL DEFAULT 0,
    n_valid         BIGINT NOT NULL DEFAULT 0,
    n_invalid       BIGINT NOT NULL DEFAULT 0,
    n_error         BIGINT NOT NULL DEFAULT 0,
    credit          DOUBLE NOT NULL DEFAULT 0,
    KEY round_stat_job (jobid)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

INSERT INTO round_stat (roundid, jobid, n_unsent, n_in_progress, n_valid, n_invalid,
    n_error, credit)
  SELECT w.roundid, MIN(w.jobid), SUM(x.server_state = 2), SUM(x.server_state = 4),
    SUM(x.validate_state = 1), SUM(x.validate_state = 2),
    SUM(x.server_state = 5 AND x.outcome NOT IN (1, 7)), SUM(x.granted_credit)
  FROM result x JOIN workunit w ON w.id = x.workunitid GROUP BY w.roundid;

CREATE TRIGGER result_stat_insert AFTER INSERT ON result FOR EACH ROW
  INSERT INTO round_stat (roundid, jobid, n_unsent, n_in_progress, n_valid, n_invalid,
      n_error, credit)
  VALUES (COALESCE((SELECT roundid FROM workunit WHERE id = NEW.workunitid), 0), NEW.jobid,
      NEW.server_state = 2, NEW.server_state = 4, NEW.validate_state = 1,
      NEW.validate_state = 2, NEW.server_state = 5 AND NEW.outcome NOT IN (1, 7),
      NEW.granted_credit)
  ON DUPLICATE KEY UPDATE n_unsent = n_unsent + VALUES(n_unsent),
      n_in_progress = n_in_progress + VALUES(n_in_progress),
      n_valid = n_valid + VALUES(n_valid), n_invalid = n_invalid + VALUES(n_invalid),
      n_error = n_error + VALUES(n_error), credit = credit + VALUES(credit);

CREATE TRIGGER result_stat_update AFTER UPDATE ON result FOR EACH ROW
  INSERT INTO round_stat (roundid, jobid, n_unsent, n_in_progress, n_valid, n_invalid,
      n_error, credit)
  VALUES (COALESCE((SELECT roundid FROM workunit WHERE id = NEW.workunitid), 0), NEW.jobid,
      (NEW.server_state = 2) - (OLD.server_state = 2),
      (NEW.server_state = 4) - (OLD.server_state = 4),
      (NEW.validate_state = 1) - (OLD.validate_state = 1),
      (NEW.validate_state = 2) - (OLD.validate_state = 2),
      (NEW.server_state = 5 AND NEW.outcome NOT IN (1, 7)) -
      (OLD.server_state = 5 AND OLD.outcome NOT IN (1, 7)),
      NEW.granted_credit - OLD.granted_credit)
  ON DUPLICATE KEY UPDATE n_unsent = n_unsent + VALUES(n_unsent),
      n_in_progress = n_in_progress + VALUES(n_in_progress),
      n_valid = n_valid + VALUES(n_valid), n_invalid = n_invalid + VALUES(n_invalid),
      n_error = n_error + VALUES(n_error), credit = credit + VALUES(credit);

-- Valid results and their credit per (job, user), kept by a trigger as
-- results are validated and credited: the job page's contributors without
-- grouping every result of the job. Written only when a count changes.
CREATE TABLE job_user_stat (
    jobid           BIGINT NOT NULL,
    userid          BIGINT NOT NULL,
    nvalid          BIGINT NOT NULL DEFAULT 0,
    credit          DOUBLE NOT NULL DEFAULT 0,
    PRIMARY KEY (jobid, userid),
    KEY job_user_stat_credit (jobid, credit)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

INSERT INTO job_user_stat (jobid, userid, nvalid, credit)
  SELECT jobid, userid, COUNT(*), SUM(granted_credit) FROM result
  WHERE validate_state = 1 GROUP BY jobid, userid;

CREATE TRIGGER result_user_stat_update AFTER UPDATE ON result FOR EACH ROW
  INSERT INTO job_user_stat (jobid, userid, nvalid, credit)
  SELECT NEW.jobid, NEW.userid, (NEW.validate_state = 1) - (OLD.validate_state = 1),
      IF(NEW.validate_state = 1, NEW.granted_credit, 0) -
      IF(OLD.validate_state = 1, OLD.granted_credit, 0)
  FROM DUAL WHERE (NEW.validate_state = 1) <> (OLD.validate_state = 1) OR
      (NEW.validate_state = 1 AND NEW.granted_credit <> OLD.granted_credit)
  ON DUPLICATE KEY UPDATE nvalid = nvalid + VALUES(nvalid), credit = credit + VALUES(credit);

CREATE TRIGGER result_user_stat_insert AFTER INSERT ON result FOR EACH ROW
  INSERT INTO job_user_stat (jobid, userid, nvalid, credit)
  SELECT NEW.jobid, NEW.userid, 1, NEW.granted_credit FROM DUAL WHERE NEW.validate_state = 1
  ON DUPLICATE KEY UPDATE nvalid = nvalid + VALUES(nvalid), credit = credit + VALUES(credit);
