-- LoRA jobs (doc/operator.md, "LoRA jobs"): a job with a row here trains
-- rank-r adapters on the chosen weight matrices instead of all weights,
-- and its results are adapter files (lib/ct_delta.h, kind 1). A job
-- without a row trains every weight.
CREATE TABLE job_lora (
    jobid           BIGINT NOT NULL PRIMARY KEY,
    lora_rank       INT NOT NULL,               -- r, 1..1024
    lora_alpha      DOUBLE NOT NULL,            -- a float32 value; s = alpha / r
    lora_targets    INT NOT NULL                -- CT_LORA_* bits: 1 qkv, 2 proj, 4 fc, 8 fcproj
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
