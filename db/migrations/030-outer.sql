-- db/migrations/030-outer.sql - the outer optimizer of a job's rounds,
-- and rounds that close without their last WUs (lib/ct_outer.h,
-- doc/workunit.md "The outer step", doc/validation.md "Assimilator"). Each
-- statement may run again after a crash (IF NOT EXISTS).
--
-- job.outer is mean (the round's aggregate is the next model: the
-- arithmetic of every job before this column), sgd or nesterov, with its
-- learning rate and momentum. round.momentum_sha256 names the momentum
-- buffer after the round's outer step (a file of the store), which the
-- next round's step reads: a restarted assimilator finds it there.
ALTER TABLE job ADD COLUMN IF NOT EXISTS outer_method VARCHAR(16) NOT NULL DEFAULT 'mean';
ALTER TABLE job ADD COLUMN IF NOT EXISTS outer_lr DOUBLE NOT NULL DEFAULT 1.0;
ALTER TABLE job ADD COLUMN IF NOT EXISTS outer_momentum DOUBLE NOT NULL DEFAULT 0.0;
ALTER TABLE `round` ADD COLUMN IF NOT EXISTS momentum_sha256 CHAR(64) NOT NULL DEFAULT '';

-- A round closes once ceil(round_quorum * nwus) of its WUs have a
-- canonical result and round_timeout seconds have passed since it opened
-- (1.0: every WU, the rule before these columns); the WUs still open are
-- abandoned. round.nwus_done is then the number of WUs in the aggregate.
ALTER TABLE job ADD COLUMN IF NOT EXISTS round_quorum DOUBLE NOT NULL DEFAULT 1.0;
ALTER TABLE job ADD COLUMN IF NOT EXISTS round_timeout INT NOT NULL DEFAULT 0;
