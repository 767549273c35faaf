-- db/migrations/035-base-format.sql - how a LoRA job keeps its frozen base,
-- and the memory a job's WU needs
-- (engine/ct_base.h, doc/workunit.md §13, doc/operator.md "LoRA
-- jobs"): 0 float32 (every job before this column), 1 bf16, 2 q8, 3 nf4.
-- A compact job's model file is the compact base the server converted once
-- at submission; its WUs carry the format, and the server widens the base
-- to float32 (exactly) to merge and evaluate. May run again (IF NOT EXISTS).
ALTER TABLE job_lora ADD COLUMN IF NOT EXISTS base_format INT NOT NULL DEFAULT 0;

-- The memory one WU of the job needs (ct_wu_mem_bytes: doc/workunit.md §13,
-- "Memory"), computed at submission; the scheduler sends a WU only to a host
-- whose reported work memory is at least this (server/rpc/eligibility.h).
-- 0 for a job from before this column: any host, as before.
ALTER TABLE job ADD COLUMN IF NOT EXISTS wu_mem_bytes BIGINT NOT NULL DEFAULT 0;
