-- db/migrations/036-task-counts.sql - the tasks of a computer and of an
-- account (/tasks, /host/ID, /user/ID and their API twins) without reading
-- every result the owner ever had. Each statement may run again after a
-- crash (IF NOT EXISTS; the triggers are dropped first).
--
-- result.task_state: what a volunteer sees of a result (dl_web.h's enum
-- ct_web_task_state), from its three state columns: 0 never sent (unsent,
-- didn't need: no one's task), 1 in progress, 2 pending validation (the
-- scheduler's pending rule), 3 valid, 4 invalid, 5 error (client error, no
-- reply, too late). Virtual: computed from the row, stored only in the
-- indexes below, which page one owner's tasks (of one state) newest first.
ALTER TABLE result ADD COLUMN IF NOT EXISTS task_state TINYINT AS (CASE
    WHEN server_state NOT IN (4, 5) OR outcome = 7 THEN 0
    WHEN server_state = 4 THEN 1
    WHEN validate_state = 1 THEN 3
    WHEN validate_state = 2 THEN 4
    WHEN outcome = 1 AND validate_state IN (0, 4) THEN 2
    ELSE 5 END) VIRTUAL;
CREATE INDEX IF NOT EXISTS result_host_task ON result (hostid, task_state);
CREATE INDEX IF NOT EXISTS result_user_task ON result (userid, task_state);
-- every task of a computer, of an account, newest first (result_user was
-- (userid, id): the same order, now with the state to filter on)
CREATE INDEX IF NOT EXISTS result_host_id ON result (hostid, id, task_state);
ALTER TABLE result DROP INDEX result_user, ADD INDEX result_user (userid, id, task_state);

-- Tasks per owner (kind 0: the computer `ownerid`, 1: the account) and
-- job, by state, with the credit granted on the valid ones: the counts by
-- state and the granted and pending credit of an owner read one row per
-- job. Kept by the triggers below as results are sent, reported,
-- validated, credited and deleted (a purged result leaves its owner's
-- list and its counts). A row whose counts fall to 0 stays.
CREATE TABLE IF NOT EXISTS task_stat (
    kind            TINYINT NOT NULL,
    ownerid         BIGINT NOT NULL,
    jobid           BIGINT NOT NULL,
    n_in_progress   BIGINT NOT NULL DEFAULT 0,
    n_pending       BIGINT NOT NULL DEFAULT 0,
    n_valid         BIGINT NOT NULL DEFAULT 0,
    n_invalid       BIGINT NOT NULL DEFAULT 0,
    n_error         BIGINT NOT NULL DEFAULT 0,
    credit          DOUBLE NOT NULL DEFAULT 0,
    PRIMARY KEY (kind, ownerid, jobid)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

DROP TRIGGER IF EXISTS result_task_stat_insert_host;
DROP TRIGGER IF EXISTS result_task_stat_insert_user;
DROP TRIGGER IF EXISTS result_task_stat_update_host;
DROP TRIGGER IF EXISTS result_task_stat_update_user;
DROP TRIGGER IF EXISTS result_task_stat_update_old_host;
DROP TRIGGER IF EXISTS result_task_stat_update_old_user;
DROP TRIGGER IF EXISTS result_task_stat_update_new_host;
DROP TRIGGER IF EXISTS result_task_stat_update_new_user;
DROP TRIGGER IF EXISTS result_task_stat_delete_host;
DROP TRIGGER IF EXISTS result_task_stat_delete_user;

-- the counts as they are (run again after a crash, each sets the same)
DELETE FROM task_stat;
INSERT INTO task_stat (kind, ownerid, jobid, n_in_progress, n_pending, n_valid,
    n_invalid, n_error, credit)
  SELECT 0, hostid, jobid, SUM(task_state = 1), SUM(task_state = 2), SUM(task_state = 3),
    SUM(task_state = 4), SUM(task_state = 5), SUM(IF(task_state = 3, granted_credit, 0))
  FROM result WHERE task_state > 0 GROUP BY hostid, jobid
  ON DUPLICATE KEY UPDATE n_in_progress = VALUES(n_in_progress),
      n_pending = VALUES(n_pending), n_valid = VALUES(n_valid),
      n_invalid = VALUES(n_invalid), n_error = VALUES(n_error), credit = VALUES(credit);
INSERT INTO task_stat (kind, ownerid, jobid, n_in_progress, n_pending, n_valid,
    n_invalid, n_error, credit)
  SELECT 1, userid, jobid, SUM(task_state = 1), SUM(task_state = 2), SUM(task_state = 3),
    SUM(task_state = 4), SUM(task_state = 5), SUM(IF(task_state = 3, granted_credit, 0))
  FROM result WHERE task_state > 0 GROUP BY userid, jobid
  ON DUPLICATE KEY UPDATE n_in_progress = VALUES(n_in_progress),
      n_pending = VALUES(n_pending), n_valid = VALUES(n_valid),
      n_invalid = VALUES(n_invalid), n_error = VALUES(n_error), credit = VALUES(credit);

-- One trigger a kind of change, each one upsert of the computer's row
-- (kind 0) and the account's (kind 1) together, adding a row's counts (1
-- in its state, its credit when valid) with sign +1 (inserted; the new
-- place of an update) or -1 (deleted; the old place). An update that keeps
-- the owners and the job writes the difference; one that moves them takes
-- the counts from the old rows and adds them to the new. Nothing runs when
-- nothing a volunteer sees changed: the triggers run on every result the
-- scheduler and the daemons change, so the test comes first. Statements
-- inside a trigger end mid-line (the migration runner cuts at a ';' that
-- ends a line).
DROP TRIGGER IF EXISTS result_task_stat_insert;
DROP TRIGGER IF EXISTS result_task_stat_update;
DROP TRIGGER IF EXISTS result_task_stat_delete;

CREATE TRIGGER result_task_stat_insert AFTER INSERT ON result FOR EACH ROW BEGIN
  IF NEW.task_state > 0 THEN
  INSERT INTO task_stat (kind, ownerid, jobid, n_in_progress, n_pending, n_valid,
      n_invalid, n_error, credit)
  VALUES (0, NEW.hostid, NEW.jobid, (NEW.task_state = 1), (NEW.task_state = 2), (NEW.task_state = 3),
      (NEW.task_state = 4), (NEW.task_state = 5), IF(NEW.task_state = 3, NEW.granted_credit, 0)),
      (1, NEW.userid, NEW.jobid, (NEW.task_state = 1), (NEW.task_state = 2), (NEW.task_state = 3),
      (NEW.task_state = 4), (NEW.task_state = 5), IF(NEW.task_state = 3, NEW.granted_credit, 0))
  ON DUPLICATE KEY UPDATE n_in_progress = n_in_progress + VALUES(n_in_progress),
      n_pending = n_pending + VALUES(n_pending), n_valid = n_valid + VALUES(n_valid),
      n_invalid = n_invalid + VALUES(n_invalid), n_error = n_error + VALUES(n_error),
      credit = credit + VALUES(credit); END IF; END;

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
    INSERT INTO task_stat (kind, ownerid, jobid, n_in_progress, n_pending, n_valid,
      n_invalid, n_error, credit)
    SELECT 0, OLD.hostid, OLD.jobid, -(OLD.task_state = 1), -(OLD.task_state = 2), -(OLD.task_state = 3),
      -(OLD.task_state = 4), -(OLD.task_state = 5), -IF(OLD.task_state = 3, OLD.granted_credit, 0)
      FROM DUAL WHERE OLD.task_state > 0
    UNION ALL SELECT 1, OLD.userid, OLD.jobid, -(OLD.task_state = 1), -(OLD.task_state = 2), -(OLD.task_state = 3),
      -(OLD.task_state = 4), -(OLD.task_state = 5), -IF(OLD.task_state = 3, OLD.granted_credit, 0)
      FROM DUAL WHERE OLD.task_state > 0
    UNION ALL SELECT 0, NEW.hostid, NEW.jobid, (NEW.task_state = 1), (NEW.task_state = 2), (NEW.task_state = 3),
      (NEW.task_state = 4), (NEW.task_state = 5), IF(NEW.task_state = 3, NEW.granted_credit, 0)
      FROM DUAL WHERE NEW.task_state > 0
    UNION ALL SELECT 1, NEW.userid, NEW.jobid, (NEW.task_state = 1), (NEW.task_state = 2), (NEW.task_state = 3),
      (NEW.task_state = 4), (NEW.task_state = 5), IF(NEW.task_state = 3, NEW.granted_credit, 0)
      FROM DUAL WHERE NEW.task_state > 0
    ON DUPLICATE KEY UPDATE n_in_progress = n_in_progress + VALUES(n_in_progress),
      n_pending = n_pending + VALUES(n_pending), n_valid = n_valid + VALUES(n_valid),
      n_invalid = n_invalid + VALUES(n_invalid), n_error = n_error + VALUES(n_error),
      credit = credit + VALUES(credit); END IF; END;

CREATE TRIGGER result_task_stat_delete AFTER DELETE ON result FOR EACH ROW BEGIN
  IF OLD.task_state > 0 THEN
  INSERT INTO task_stat (kind, ownerid, jobid, n_in_progress, n_pending, n_valid,
      n_invalid, n_error, credit)
  VALUES (0, OLD.hostid, OLD.jobid, -(OLD.task_state = 1), -(OLD.task_state = 2), -(OLD.task_state = 3),
      -(OLD.task_state = 4), -(OLD.task_state = 5), -IF(OLD.task_state = 3, OLD.granted_credit, 0)),
      (1, OLD.userid, OLD.jobid, -(OLD.task_state = 1), -(OLD.task_state = 2), -(OLD.task_state = 3),
      -(OLD.task_state = 4), -(OLD.task_state = 5), -IF(OLD.task_state = 3, OLD.granted_credit, 0))
  ON DUPLICATE KEY UPDATE n_in_progress = n_in_progress + VALUES(n_in_progress),
      n_pending = n_pending + VALUES(n_pending), n_valid = n_valid + VALUES(n_valid),
      n_invalid = n_invalid + VALUES(n_invalid), n_error = n_error + VALUES(n_error),
      credit = credit + VALUES(credit); END IF; END;
