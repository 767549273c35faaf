-- db/migrations/043-ref-mem.sql - the memory one WU of the job needs on the
-- C reference (ct_ref_wu_bytes: doc/workunit.md §13, "Memory"), beside
-- job.wu_mem_bytes, what it needs on OpenCL; computed at submission. The
-- scheduler holds a host whose work memory is for the C reference
-- (host/work_backend "cpu") to this, one that names no backend to the
-- larger of the two (server/rpc/eligibility.h). 0 for a job from before
-- this column: its "cpu" hosts are held to wu_mem_bytes. May run again
-- (IF NOT EXISTS).
ALTER TABLE job ADD COLUMN IF NOT EXISTS wu_mem_ref_bytes BIGINT NOT NULL DEFAULT 0;
