-- db/migrations/044-result-trigger-values.sql - the result update triggers
-- of 036 (task_stat) and 038 (round_stat) with the same counters, to the
-- row, and less work a row. They run on every result the scheduler sends
-- or takes a report of (eight rows a returning host's RPC), so what each
-- costs is a share of every RPC:
--
-- * task_stat: a send moves a result from no owner (hostid 0) to its
--   computer and account, which took 036's branch for a change of owner:
--   one INSERT ... SELECT of a four-way UNION ALL, materialised in an
--   internal temporary table (a 2 MiB block allocated, zeroed and given
--   back per row). Here the old owners' rows and the new owners' rows
--   are each one INSERT ... VALUES, run only when that side has a state
--   (a send: the new side only).
-- * round_stat: the round of a sent result is result.sent_round (the
--   WU's roundid, written with the send: 024); the WU is read for it only
--   when that is 0 (never sent, or sent before 024), instead of a
--   subquery in the counter statement of every row.
--
-- Statements inside a trigger end mid-line (the migration runner cuts at
-- a ';' that ends a line). May run again (DROP ... IF EXISTS).
DROP TRIGGER IF EXISTS result_task_stat_update;
DROP TRIGGER IF EXISTS result_stat_update;

CREATE TRIGGER result_task_stat_update AFTER UPDATE ON result FOR EACH ROW BEGIN
  IF NEW.hostid = OLD.hostid AND NEW.userid = OLD.userid AND NEW.jobid = OLD.jobid THEN
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
      credit = credit + VALUES(credit); END IF; END IF; END;

CREATE TRIGGER result_stat_update AFTER UPDATE ON result FOR EACH ROW BEGIN
  DECLARE rid BIGINT DEFAULT NEW.sent_round; IF NEW.server_state <> OLD.server_state OR NEW.outcome <> OLD.outcome OR
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
    ON DUPLICATE KEY UPDATE nvalid = nvalid + VALUES(nvalid), credit = credit + VALUES(credit); END IF; END;
