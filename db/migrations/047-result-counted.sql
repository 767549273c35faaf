-- db/migrations/047-result-counted.sql - the result update triggers of
-- 044, the same counters, skipped for the rows of a statement whose
-- writer counts them itself: while the session's @ct_result_counted is
-- set (result_state.c sets it around a send of several results, one
-- UPDATE, and adds that statement's rows to round_stat and task_stat in
-- one statement each, as many as the UPDATE moved; the triggers ran two
-- counter statements a row). Every other writer leaves it unset and its
-- rows are counted by the triggers as before.
--
-- Statements inside a trigger end mid-line (the migration runner cuts at
-- a ';' that ends a line). May run again (DROP ... IF EXISTS).
DROP TRIGGER IF EXISTS result_task_stat_update;
DROP TRIGGER IF EXISTS result_stat_update;

CREATE TRIGGER result_task_stat_update AFTER UPDATE ON result FOR EACH ROW BEGIN
  IF @ct_result_counted IS NULL THEN IF NEW.hostid = OLD.hostid AND NEW.userid = OLD.userid AND NEW.jobid = OLD.jobid THEN
    IF OLD.task_state <> NEW.task_state OR OLD.granted_credit <> NEW.granted_credit THEN
    INSERT INTO task_stat (kind, ownerid, jobid, n_in_progress, n_pending, n_valid,
      n_invalid, n_error, credit)
    VALUES (0, NEW.hostid, NEW.jobid,
      (NEW.task_state = 1) - (OLD.task_state = 1), (NEW.task_state = 2) - (OLD.task_state = 2),
      (NEW.task_state = 3) - (OLD.task_state = 3), (NEW.task_state = 4) - (OLD.task_state = 4),
      (NEW.task_state = 5) - (OLD.task_state = 5),
      IF(NEW.task_state = 3, NEW.granted_credit, 0) - IF(OLD.task_state = 3, OLD.granted_credit, 0)),
      (1, NEW.userid, NEW.jobid,
      (NEW.task_state = 1) - (OLD.task_state = 1), (NEW.task_state = 2) - (OLD.task_state = 2),
      (NEW.task_state = 3) - (OLD.task_state = 3), (NEW.task_state = 4) - (OLD.task_state = 4),
      (NEW.task_state = 5) - (OLD.task_state = 5),
      IF(NEW.task_state = 3, NEW.granted_credit, 0) - IF(OLD.task_state = 3, OLD.granted_credit, 0))
    ON DUPLICATE KEY UPDATE n_in_progress = n_in_progress + VALUES(n_in_progress),
      n_pending = n_pending + VALUES(n_pending), n_valid = n_valid + VALUES(n_valid),
      n_invalid = n_invalid + VALUES(n_invalid), n_error = n_error + VALUES(n_error),
      credit = credit + VALUES(credit); END IF; ELSE
    IF OLD.task_state > 0 THEN
    INSERT INTO task_stat (kind, ownerid, jobid, n_in_progress, n_pending, n_valid,
      n_invalid, n_error, credit)
    VALUES (0, OLD.hostid, OLD.jobid, -(OLD.task_state = 1), -(OLD.task_state = 2),
      -(OLD.task_state = 3), -(OLD.task_state = 4), -(OLD.task_state = 5),
      -IF(OLD.task_state = 3, OLD.granted_credit, 0)),
      (1, OLD.userid, OLD.jobid, -(OLD.task_state = 1), -(OLD.task_state = 2),
      -(OLD.task_state = 3), -(OLD.task_state = 4), -(OLD.task_state = 5),
      -IF(OLD.task_state = 3, OLD.granted_credit, 0))
    ON DUPLICATE KEY UPDATE n_in_progress = n_in_progress + VALUES(n_in_progress),
      n_pending = n_pending + VALUES(n_pending), n_valid = n_valid + VALUES(n_valid),
      n_invalid = n_invalid + VALUES(n_invalid), n_error = n_error + VALUES(n_error),
      credit = credit + VALUES(credit); END IF; IF NEW.task_state > 0 THEN
    INSERT INTO task_stat (kind, ownerid, jobid, n_in_progress, n_pending, n_valid,
      n_invalid, n_error, credit)
    VALUES (0, NEW.hostid, NEW.jobid, (NEW.task_state = 1), (NEW.task_state = 2),
      (NEW.task_state = 3), (NEW.task_state = 4), (NEW.task_state = 5),
      IF(NEW.task_state = 3, NEW.granted_credit, 0)),
      (1, NEW.userid, NEW.jobid, (NEW.task_state = 1), (NEW.task_state = 2),
      (NEW.task_state = 3), (NEW.task_state = 4), (NEW.task_state = 5),
      IF(NEW.task_state = 3, NEW.granted_credit, 0))
    ON DUPLICATE KEY UPDATE n_in_progress = n_in_progress + VALUES(n_in_progress),
      n_pending = n_pending + VALUES(n_pending), n_valid = n_valid + VALUES(n_valid),
      n_invalid = n_invalid + VALUES(n_invalid), n_error = n_error + VALUES(n_error),
      credit = credit + VALUES(credit); END IF; END IF; END IF; END;

CREATE TRIGGER result_stat_update AFTER UPDATE ON result FOR EACH ROW BEGIN
  DECLARE rid BIGINT DEFAULT NEW.sent_round; IF @ct_result_counted IS NULL THEN IF NEW.server_state <> OLD.server_state OR NEW.outcome <> OLD.outcome OR
      NEW.validate_state <> OLD.validate_state OR NEW.granted_credit <> OLD.granted_credit OR
      NEW.workunitid <> OLD.workunitid OR NEW.jobid <> OLD.jobid THEN
    IF rid = 0 OR NEW.workunitid <> OLD.workunitid THEN
      SET rid = COALESCE((SELECT roundid FROM workunit WHERE id = NEW.workunitid), 0); END IF; INSERT INTO round_stat (roundid, jobid, n_unsent, n_in_progress, n_valid, n_invalid,
        n_error, credit)
    VALUES (rid, NEW.jobid,
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
    ON DUPLICATE KEY UPDATE nvalid = nvalid + VALUES(nvalid), credit = credit + VALUES(credit); END IF; END IF; END;
