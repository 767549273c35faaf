-- db/migrations/046-lora-init.sql - the adapters a round's WUs start
-- from (doc/workunit.md §13, "Jobs on a compact base"): a compact-base
-- LoRA job's round r >= 2 starts from round r-1's mean adapters, a file
-- of the store (engine/ct_lora_file.h) that the round's WUs name as their
-- "lora_init" input. '' for every other round (their WUs start from
-- ct_lora_init of the seed). May run again (IF NOT EXISTS).
ALTER TABLE `round` ADD COLUMN IF NOT EXISTS lora_init_sha256 CHAR(64) NOT NULL DEFAULT '';
