-- db/migrations/036-task-counts.sql - the tasks of a computer and of an
-- account (/tasks, /host/ID, /user/ID and their API twins) without reading
-- every result the owner ever had. Each statement may run again after a
-- crash (IF NOT EXISTS; the triggers are dropped first).
--
-- result.task_state: what a volunteer sees of a result (dl_web.h's enum
-- ct_web_task_state), from its three state columns: 0 never sent (unsent,
-- didn't need: no one's task), 1 in progress, 2 pending validation (the
-- scheduler's pending rule), 3 valid, 4 invalid, 5 error (client error, no
-- reply, too late). Virtual: computed from the row, stored only in the two
-- indexes below, which page one state of one owner newest first.
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

-- Tasks per owner (kind 0: the computer `ownerid`, 1: the account), state
-- (task_state 1-5) and job, with the sum of their granted credit: the
-- counts by state and the granted and pending credit of an owner read one
-- row per (state, job). Kept by the triggers below as results are sent,
-- reported, validated, credited and deleted (a purged result leaves its
-- owner's list and its counts). A row that falls to 0 stays.
CREATE TABLE IF NOT EXISTS task_stat (
    kind        TINYINT NOT NULL,
    ownerid     BIGINT NOT NULL,
    state       TINYINT NOT NULL,
    jobid       BIGINT NOT NULL,
    n           BIGINT NOT NULL DEFAULT 0,
    credit      DOUBLE NOT NULL DEFAULT 0,
    PRIMARY KEY (kind, ownerid, state, jobid)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

DROP TRIGGER IF EXISTS result_task_stat_insert_host;
DROP TRIGGER IF EXISTS result_task_stat_insert_user;
DROP TRIGGER IF EXISTS result_task_stat_update_old_host;
DROP TRIGGER IF EXISTS result_task_stat_update_old_user;
DROP TRIGGER IF EXISTS result_task_stat_update_new_host;
DROP TRIGGER IF EXISTS result_task_stat_update_new_user;
DROP TRIGGER IF EXISTS result_task_stat_delete_host;
DROP TRIGGER IF EXISTS result_task_stat_delete_user;

DELETE FROM task_stat;
INSERT INTO task_stat (kind, ownerid, state, jobid, n, credit)
  SELECT 0, hostid, task_state, jobid, COUNT(*), SUM(granted_credit) FROM result
  WHERE task_state > 0 GROUP BY hostid, task_state, jobid;
INSERT INTO task_stat (kind, ownerid, state, jobid, n, credit)
  SELECT 1, userid, task_state, jobid, COUNT(*), SUM(granted_credit) FROM result
  WHERE task_state > 0 GROUP BY userid, task_state, jobid;

-- Each trigger one plain upsert, for the computer (kind 0) or the account
-- (kind 1): an inserted row counts one more in its place, a deleted one
-- one less, an updated one that moved (state, owner, job or credit) one
-- less in its old place and one more in its new. (One statement each, no
-- derived table: they run on every result the scheduler and the daemons
-- change.)
CREATE TRIGGER result_task_stat_insert_host AFTER INSERT ON result FOR EACH ROW
  INSERT INTO task_stat (kind, ownerid, state, jobid, n, credit)
  SELECT 0, NEW.hostid, NEW.task_state, NEW.jobid, 1, NEW.granted_credit
  FROM DUAL WHERE NEW.task_state > 0
  ON DUPLICATE KEY UPDATE n = n + VALUES(n), credit = credit + VALUES(credit);
CREATE TRIGGER result_task_stat_insert_user AFTER INSERT ON result FOR EACH ROW
  INSERT INTO task_stat (kind, ownerid, state, jobid, n, credit)
  SELECT 1, NEW.userid, NEW.task_state, NEW.jobid, 1, NEW.granted_credit
  FROM DUAL WHERE NEW.task_state > 0
  ON DUPLICATE KEY UPDATE n = n + VALUES(n), credit = credit + VALUES(credit);
CREATE TRIGGER result_task_stat_update_old_host AFTER UPDATE ON result FOR EACH ROW
  INSERT INTO task_stat (kind, ownerid, state, jobid, n, credit)
  SELECT 0, OLD.hostid, OLD.task_state, OLD.jobid, -1, -OLD.granted_credit
  FROM DUAL WHERE OLD.task_state > 0 AND
      (OLD.task_state <> NEW.task_state OR OLD.hostid <> NEW.hostid OR
      OLD.userid <> NEW.userid OR OLD.jobid <> NEW.jobid OR
      OLD.granted_credit <> NEW.granted_credit)
  ON DUPLICATE KEY UPDATE n = n + VALUES(n), credit = credit + VALUES(credit);
CREATE TRIGGER result_task_stat_update_old_user AFTER UPDATE ON result FOR EACH ROW
  INSERT INTO task_stat (kind, ownerid, state, jobid, n, credit)
  SELECT 1, OLD.userid, OLD.task_state, OLD.jobid, -1, -OLD.granted_credit
  FROM DUAL WHERE OLD.task_state > 0 AND
      (OLD.task_state <> NEW.task_state OR OLD.hostid <> NEW.hostid OR
      OLD.userid <> NEW.userid OR OLD.jobid <> NEW.jobid OR
      OLD.granted_credit <> NEW.granted_credit)
  ON DUPLICATE KEY UPDATE n = n + VALUES(n), credit = credit + VALUES(credit);
CREATE TRIGGER result_task_stat_update_new_host AFTER UPDATE ON result FOR EACH ROW
  INSERT INTO task_stat (kind, ownerid, state, jobid, n, credit)
  SELECT 0, NEW.hostid, NEW.task_state, NEW.jobid, 1, NEW.granted_credit
  FROM DUAL WHERE NEW.task_state > 0 AND
      (OLD.task_state <> NEW.task_state OR OLD.hostid <> NEW.hostid OR
      OLD.userid <> NEW.userid OR OLD.jobid <> NEW.jobid OR
      OLD.granted_credit <> NEW.granted_credit)
  ON DUPLICATE KEY UPDATE n = n + VALUES(n), credit = credit + VALUES(credit);
CREATE TRIGGER result_task_stat_update_new_user AFTER UPDATE ON result FOR EACH ROW
  INSERT INTO task_stat (kind, ownerid, state, jobid, n, credit)
  SELECT 1, NEW.userid, NEW.task_state, NEW.jobid, 1, NEW.granted_credit
  FROM DUAL WHERE NEW.task_state > 0 AND
      (OLD.task_state <> NEW.task_state OR OLD.hostid <> NEW.hostid OR
      OLD.userid <> NEW.userid OR OLD.jobid <> NEW.jobid OR
      OLD.granted_credit <> NEW.granted_credit)
  ON DUPLICATE KEY UPDATE n = n + VALUES(n), credit = credit + VALUES(credit);
CREATE TRIGGER result_task_stat_delete_host AFTER DELETE ON result FOR EACH ROW
  INSERT INTO task_stat (kind, ownerid, state, jobid, n, credit)
  SELECT 0, OLD.hostid, OLD.task_state, OLD.jobid, -1, -OLD.granted_credit
  FROM DUAL WHERE OLD.task_state > 0
  ON DUPLICATE KEY UPDATE n = n + VALUES(n), credit = credit + VALUES(credit);
CREATE TRIGGER result_task_stat_delete_user AFTER DELETE ON result FOR EACH ROW
  INSERT INTO task_stat (kind, ownerid, state, jobid, n, credit)
  SELECT 1, OLD.userid, OLD.task_state, OLD.jobid, -1, -OLD.granted_credit
  FROM DUAL WHERE OLD.task_state > 0
  ON DUPLICATE KEY UPDATE n = n + VALUES(n), credit = credit + VALUES(credit);
