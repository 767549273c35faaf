-- 021-job-tokenizer.sql: a job's own tokenizer files (server/cmd/job_tokenizer.h).
-- A job submitted with a Hugging Face directory (or --tokenizer PATH) keeps
-- its tokenizer.json, and the directory's tokenizer_config.json,
-- special_tokens_map.json and generation_config.json, in the store (file
-- kind 'tokenizer', keep 1): samples decode with them, `job export --hf`
-- copies them. job_text.tokenizer is then 'tokenizer.json'.
CREATE TABLE job_tokenizer_file (
    jobid           BIGINT NOT NULL,
    name            VARCHAR(64) NOT NULL,          -- tokenizer.json, ...
    sha256          CHAR(64) NOT NULL,
    PRIMARY KEY (jobid, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
