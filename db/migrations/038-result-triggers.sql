-- db/migrations/038-result-triggers.sql - the result triggers that keep
-- round_stat and job_user_stat (migration 004), one a kind of change
-- instead of two, each statement run only when its counters change: a
-- result's send or report (the scheduler's hot path) runs the round's
-- counter update only; the per-account credit counter runs on a
-- validation or a credit change. The counters are those of 004, to the
-- row. May run again (DROP ... IF EXISTS).
DROP TRIGGER IF EXISTS result_stat_update;
DROP TRIGGER IF EXISTS result_user_stat_update;
DROP TRIGGER IF EXISTS result_stat_insert;
DROP TRIGGER IF EXISTS result_user_stat_insert;

CREATE TRIGGER result_stat_insert AFTER INSERT ON result FOR EACH ROW BEGIN
  INSERT INTO round_stat (roundid, jobid, n_unsent, n_in_progress, n_valid, n_invalid,
      n_error, credit)
  VALUES (COALESCE((SELECT roundid FROM workunit WHERE id = NEW.workunitid), 0), NEW.jobid,
      NEW.server_state = 2, NEW.server_state = 4, NEW.validate_state = 1,
      NEW.validate_state = 2, NEW.server_state = 5 AND NEW.outcome NOT IN (1, 7),
      NEW.granted_credit)
  ON DUPLICATE KEY UPDATE n_unsent = n_unsent + VALUES(n_unsent),
      n_in_progress = n_in_progress + VALUES(n_in_progress),
      n_valid = n_valid + VALUES(n_valid), n_invalid = n_invalid + VALUES(n_invalid),
      n_error = n_error + VALUES(n_error), credit = credit + VALUES(credit); IF NEW.validate_state = 1 THEN
    INSERT INTO job_user_stat (jobid, userid, nvalid, credit)
    VALUES (NEW.jobid, NEW.userid, 1, NEW.granted_credit)
    ON DUPLICATE KEY UPDATE nvalid = nvalid + VALUES(nvalid), credit = credit + VALUES(credit); END IF; END;

CREATE TRIGGER result_stat_update AFTER UPDATE ON result FOR EACH ROW BEGIN
  IF NEW.server_state <> OLD.server_state OR NEW.outcome <> OLD.outcome OR
      NEW.validate_state <> OLD.validate_state OR NEW.granted_credit <> OLD.granted_credit OR
      NEW.workunitid <> OLD.workunitid OR NEW.jobid <> OLD.jobid THEN
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
        n_error = n_error + VALUES(n_error), credit = credit + VALUES(credit); END IF; IF (NEW.validate_state = 1) <> (OLD.validate_state = 1) OR
      (NEW.validate_state = 1 AND NEW.granted_credit <> OLD.granted_credit) THEN
    INSERT INTO job_user_stat (jobid, userid, nvalid, credit)
    VALUES (NEW.jobid, NEW.userid, (NEW.validate_state = 1) - (OLD.validate_state = 1),
        IF(NEW.validate_state = 1, NEW.granted_credit, 0) -
        IF(OLD.validate_state = 1, OLD.granted_credit, 0))
    ON DUPLICATE KEY UPDATE nvalid = nvalid + VALUES(nvalid), credit = credit + VALUES(credit); END IF; END;
