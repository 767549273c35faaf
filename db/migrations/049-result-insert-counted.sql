-- db/migrations/049-result-insert-counted.sql - the result insert trigger
-- of 038, the same counters, skipped for the rows of a statement whose
-- writer counts them itself: while the session's @ct_result_counted is
-- set (result_state.c sets it around the transitioner's insert of a
-- group's new results, one INSERT, and adds them to round_stat in one
-- statement a round; the trigger ran a counter statement a row), as 047
-- does for updates. Every other writer leaves it unset and its rows are
-- counted by the trigger as before.
--
-- Statements inside a trigger end mid-line (the migration runner cuts at
-- a ';' that ends a line). May run again (DROP ... IF EXISTS).
DROP TRIGGER IF EXISTS result_stat_insert;

CREATE TRIGGER result_stat_insert AFTER INSERT ON result FOR EACH ROW BEGIN
  IF @ct_result_counted IS NULL THEN INSERT INTO round_stat (roundid, jobid, n_unsent, n_in_progress, n_valid, n_invalid,
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
    ON DUPLICATE KEY UPDATE nvalid = nvalid + VALUES(nvalid), credit = credit + VALUES(credit); END IF; END IF; END;
