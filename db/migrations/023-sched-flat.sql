-- db/migrations/023-sched-flat.sql - a scheduler RPC whose cost does not
-- grow with the unsent work. Each statement may run again
-- after a crash (IF NOT EXISTS).
--
-- A deadline's estimate (worklimit.c) is the median run time of the job's
-- last valid results: read newest first from this index, it stops after
-- those few rows instead of walking back through every result of the job
-- (65 ms an RPC at 10,000 unsent WUs, 409 ms at 30,000 before).
CREATE INDEX IF NOT EXISTS result_job_valid ON result (jobid, validate_state, id);
