-- db/migrations/032-sample-chat.sql - a chat job's fixed conversation
-- (`job submit --sample-chat FILE.json`, server/daemons/sample.h): the
-- assimilator samples the reply of the base model and of every round's
-- model to it, rendered with the job's chat template and
-- add_generation_prompt; round_sample.sample_text then holds the reply.
-- '' for text samples (sample_prompt). May run again (IF NOT EXISTS).
ALTER TABLE job_text ADD COLUMN IF NOT EXISTS sample_chat TEXT NOT NULL DEFAULT '';
