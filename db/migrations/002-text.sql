-- 002-text.sql: text in, text out (server/daemons/sample.h).
-- A job's tokenizer and the prompt and seed of its samples.
CREATE TABLE job_text (
    jobid           BIGINT NOT NULL PRIMARY KEY,
    tokenizer       VARCHAR(16) NOT NULL,          -- "bytes", "gpt2"
    sample_prompt   VARCHAR(255) NOT NULL DEFAULT '',
    sample_seed     BIGINT NOT NULL DEFAULT 1
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- One sample per model of a job, computed once by the assimilator:
-- round_idx 0 is the base model, r >= 1 round r's average.
CREATE TABLE round_sample (
    jobid           BIGINT NOT NULL,
    round_idx       INT NOT NULL,
    model_sha256    CHAR(64) NOT NULL,
    create_time     BIGINT NOT NULL,
    sample_text     TEXT NOT NULL,                 -- valid UTF-8 (ct_sample_utf8_clean)
    PRIMARY KEY (jobid, round_idx)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
