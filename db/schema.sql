-- db/schema.sql - crowdtune's database schema, version 1 (MySQL/MariaDB,
-- InnoDB). ctune-server applies this file to an empty database, then every
-- db/migrations/NNN-*.sql with NNN > 1 in order, and records each version
-- in schema_version. Both are compiled into the binary (db/local.mk), so a
-- project needs no files besides its own directory.
--
-- Design (as BOINC's): each row carries independent state columns, and each
-- daemon selects on its own column through an index, changes rows with
-- conditional UPDATEs (WHERE <state> = <expected>) and checks the affected
-- row count, so every daemon is restartable and may run in several
-- instances. The numeric codes of every state column are the enums in
-- server/data/db.h (CT_RS_*, CT_RO_*, CT_VS_*, CT_AS_*, CT_FD_*, CT_JOB_*,
-- CT_ROUND_*, CT_WU_ERR_*); the comments below repeat them.
--
-- Conventions: ids are BIGINT AUTO_INCREMENT (0 means "none"); times are
-- BIGINT unix seconds (0 = never); hashes are lowercase hex CHAR(64) ('' =
-- none); `user`, `round` and `file` are always written with backquotes.
-- Locking rule for everyone: a transaction that changes results of a WU
-- first locks that WU's row (SELECT id FROM workunit WHERE id=? FOR UPDATE),
-- so row locks are always taken workunit -> result (no deadlock cycles).
-- The file splitter in ctune-server cuts statements at a ';' that ends a
-- line: keep ';' out of comments' line ends and string literals.

CREATE TABLE schema_version (
    version     INT NOT NULL PRIMARY KEY,
    name        VARCHAR(128) NOT NULL,
    applied_at  BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE team (
    id              BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    create_time     BIGINT NOT NULL,
    name            VARCHAR(64) NOT NULL,
    userid          BIGINT NOT NULL DEFAULT 0,      -- founder
    description     VARCHAR(1024) NOT NULL DEFAULT '',
    url             VARCHAR(255) NOT NULL DEFAULT '',
    nusers          INT NOT NULL DEFAULT 0,
    total_credit    DOUBLE NOT NULL DEFAULT 0,      -- cobblestones
    expavg_credit   DOUBLE NOT NULL DEFAULT 0,      -- RAC, 7-day half-life
    expavg_time     DOUBLE NOT NULL DEFAULT 0,      -- unix time of last RAC update
    UNIQUE KEY team_name (name),
    KEY team_total (total_credit),
    KEY team_expavg (expavg_credit)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE `user` (
    id              BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    create_time     BIGINT NOT NULL,
    name            VARCHAR(64) NOT NULL,
    email           VARCHAR(254) NOT NULL,          -- stored lowercase
    -- "pbkdf2-sha256$<iterations>$<salt hex>$<first 32 derived bytes hex>"
    passwd_hash     VARCHAR(255) NOT NULL,
    -- SHA-256 (hex) of the 32-hex-digit account key; the key itself is
    -- never stored
    auth_hash       CHAR(64) NOT NULL,
    -- the account key XOR 16 bytes PBKDF2 derives from the password after
    -- the 32 bytes of passwd_hash (hex): a lookup with the password gets
    -- the key back; nothing else can
    auth_wrapped    CHAR(32) NOT NULL DEFAULT '',
    teamid          BIGINT NOT NULL DEFAULT 0,
    country         VARCHAR(64) NOT NULL DEFAULT '',
    url             VARCHAR(255) NOT NULL DEFAULT '',
    is_admin        TINYINT NOT NULL DEFAULT 0,
    total_credit    DOUBLE NOT NULL DEFAULT 0,
    expavg_credit   DOUBLE NOT NULL DEFAULT 0,
    expavg_time     DOUBLE NOT NULL DEFAULT 0,
    UNIQUE KEY user_email (email),
    UNIQUE KEY user_auth (auth_hash),
    KEY user_team (teamid),
    KEY user_total (total_credit),
    KEY user_expavg (expavg_credit)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE host (
    id                  BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    create_time         BIGINT NOT NULL,
    userid              BIGINT NOT NULL,
    -- random id the client makes once (32 hex); a client that lost its
    -- host id gets the same host back for the same account
    host_cpid           CHAR(32) NOT NULL,
    hostname            VARCHAR(255) NOT NULL DEFAULT '',
    os                  VARCHAR(255) NOT NULL DEFAULT '',
    cpu_model           VARCHAR(255) NOT NULL DEFAULT '',
    ncpus               INT NOT NULL DEFAULT 0,
    ram_bytes           BIGINT NOT NULL DEFAULT 0,
    client_version      VARCHAR(64) NOT NULL DEFAULT '',
    last_ip             VARCHAR(64) NOT NULL DEFAULT '',
    rpc_time            BIGINT NOT NULL DEFAULT 0,       -- last scheduler RPC
    nrpc                BIGINT NOT NULL DEFAULT 0,
    -- adaptive replication: valid results in a row (any invalid resets it)
    consecutive_valid   INT NOT NULL DEFAULT 0,
    nresults_valid      INT NOT NULL DEFAULT 0,
    nresults_invalid    INT NOT NULL DEFAULT 0,
    nresults_error      INT NOT NULL DEFAULT 0,
    max_in_progress     INT NOT NULL DEFAULT 0,          -- 0: project default
    total_credit        DOUBLE NOT NULL DEFAULT 0,
    expavg_credit       DOUBLE NOT NULL DEFAULT 0,
    expavg_time         DOUBLE NOT NULL DEFAULT 0,
    UNIQUE KEY host_user_cpid (userid, host_cpid),
    KEY host_total (total_credit),
    KEY host_expavg (expavg_credit)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- One row per OpenCL (or CPU reference) device of a host, as last reported.
CREATE TABLE device (
    id              BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    hostid          BIGINT NOT NULL,
    slot            INT NOT NULL,            -- position in the host's list
    name            VARCHAR(255) NOT NULL DEFAULT '',
    vendor          VARCHAR(255) NOT NULL DEFAULT '',
    type            VARCHAR(32) NOT NULL DEFAULT '',     -- gpu | cpu | accelerator | reference
    global_mem      BIGINT NOT NULL DEFAULT 0,
    compute_units   INT NOT NULL DEFAULT 0,
    conforming      TINYINT NOT NULL DEFAULT 0,  -- passed the bit-exactness self-test
    update_time     BIGINT NOT NULL DEFAULT 0,
    UNIQUE KEY device_host_slot (hostid, slot)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Content-addressed files under PROJECT/download/<aa>/<sha256>.
CREATE TABLE `file` (
    id                  BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    sha256              CHAR(64) NOT NULL,
    size                BIGINT NOT NULL,
    kind                VARCHAR(16) NOT NULL,    -- model | train | shard | eval | round_model | final
    jobid               BIGINT NOT NULL DEFAULT 0,
    create_time         BIGINT NOT NULL,
    keep                TINYINT NOT NULL DEFAULT 0,  -- 1: never deleted (round models, final)
    -- CT_FD_*: 0 init, 1 ready (may be deleted), 2 done, 3 error
    file_delete_state   TINYINT NOT NULL DEFAULT 0,
    UNIQUE KEY file_sha (sha256),
    KEY file_job (jobid),
    KEY file_delete (file_delete_state)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE job (
    id                  BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    name                VARCHAR(128) NOT NULL,
    create_time         BIGINT NOT NULL,
    update_time         BIGINT NOT NULL DEFAULT 0,
    finish_time         BIGINT NOT NULL DEFAULT 0,
    -- CT_JOB_*: 1 running, 2 done, 3 canceled, 4 error
    status              TINYINT NOT NULL DEFAULT 1,
    error_message       VARCHAR(255) NOT NULL DEFAULT '',
    -- inputs (sha256 of files in the download store)
    model_sha256        CHAR(64) NOT NULL,       -- base checkpoint
    model_size          BIGINT NOT NULL,
    train_sha256        CHAR(64) NOT NULL,       -- whole training token file
    eval_sha256         CHAR(64) NOT NULL,       -- held-out tokens
    final_model_sha256  CHAR(64) NOT NULL DEFAULT '',
    -- shape of the job
    nshards             INT NOT NULL,
    nrounds             INT NOT NULL,
    cur_round           INT NOT NULL DEFAULT 0,  -- newest opened round (1-based)
    -- hyperparameters (AdamW), identical for every WU of the job
    steps               INT NOT NULL,
    batch               INT NOT NULL,
    seq                 INT NOT NULL,
    lr                  DOUBLE NOT NULL,
    beta1               DOUBLE NOT NULL DEFAULT 0.9,
    beta2               DOUBLE NOT NULL DEFAULT 0.999,
    eps                 DOUBLE NOT NULL DEFAULT 1e-8,
    weight_decay        DOUBLE NOT NULL DEFAULT 0,
    grad_clip           DOUBLE NOT NULL DEFAULT 1.0,
    seed                BIGINT NOT NULL DEFAULT 0,
    -- replication and validation policy
    min_quorum          INT NOT NULL DEFAULT 2,
    target_nresults     INT NOT NULL DEFAULT 2,
    max_error_results   INT NOT NULL DEFAULT 3,
    max_total_results   INT NOT NULL DEFAULT 6,
    max_success_results INT NOT NULL DEFAULT 5,
    delay_bound         INT NOT NULL DEFAULT 86400,  -- seconds from send to deadline
    adaptive_replication TINYINT NOT NULL DEFAULT 1,
    tolerance           DOUBLE NOT NULL DEFAULT 1e-3,   -- relative distance of two updates
    loss_margin         DOUBLE NOT NULL DEFAULT 0.05,   -- probe loss may be worse than base by this
    probe_tokens        INT NOT NULL DEFAULT 0,         -- size of the validator's probe slice (0: default)
    upload_encoding     VARCHAR(16) NOT NULL DEFAULT 'lossless',  -- lossless | int8
    max_upload_bytes    BIGINT NOT NULL,
    aggregation         VARCHAR(16) NOT NULL DEFAULT 'mean',
    base_eval_loss      DOUBLE NULL,             -- eval loss of the base model
    final_eval_loss     DOUBLE NULL,
    KEY job_status (status)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- The K shards of a job's training tokens (each its own token file in the
-- store), made at submission; every round's WU k trains on shard k.
CREATE TABLE job_shard (
    jobid           BIGINT NOT NULL,
    shard           INT NOT NULL,            -- 0-based
    sha256          CHAR(64) NOT NULL,
    size            BIGINT NOT NULL,
    ntokens         BIGINT NOT NULL,
    PRIMARY KEY (jobid, shard)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Round r of a job: K WUs that all start from model_sha256.
CREATE TABLE `round` (
    id                  BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    jobid               BIGINT NOT NULL,
    idx                 INT NOT NULL,            -- 1-based
    create_time         BIGINT NOT NULL,
    finish_time         BIGINT NOT NULL DEFAULT 0,
    -- CT_ROUND_*: 1 open, 2 done (averaged, next one opened), 3 error, 4 canceled
    status              TINYINT NOT NULL DEFAULT 1,
    model_sha256        CHAR(64) NOT NULL,       -- base of this round
    out_model_sha256    CHAR(64) NOT NULL DEFAULT '',  -- average of the canonical results
    nwus                INT NOT NULL,
    nwus_done           INT NOT NULL DEFAULT 0,  -- WUs with a canonical result
    eval_loss           DOUBLE NULL,             -- eval loss of out_model
    base_eval_loss      DOUBLE NULL,             -- eval loss of model_sha256
    UNIQUE KEY round_job_idx (jobid, idx),
    KEY round_status (status)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE workunit (
    id                  BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    create_time         BIGINT NOT NULL,
    name                VARCHAR(64) NOT NULL,    -- "j<job>-r<round>-s<shard>"
    jobid               BIGINT NOT NULL,
    roundid             BIGINT NOT NULL,
    round_idx           INT NOT NULL,
    shard               INT NOT NULL,            -- 0-based
    seed                BIGINT NOT NULL,         -- s(r, k)
    model_sha256        CHAR(64) NOT NULL,
    model_size          BIGINT NOT NULL,
    data_sha256         CHAR(64) NOT NULL,       -- the shard's token file
    data_size           BIGINT NOT NULL,
    data_tokens         BIGINT NOT NULL,
    rsc_fpops           DOUBLE NOT NULL DEFAULT 0,   -- training FLOPs (credit.c fills when 0)
    target_nresults     INT NOT NULL,
    min_quorum          INT NOT NULL,
    max_error_results   INT NOT NULL,
    max_total_results   INT NOT NULL,
    max_success_results INT NOT NULL,
    delay_bound         INT NOT NULL,
    priority            INT NOT NULL DEFAULT 0,
    -- transitioner: handle this WU when transition_time <= now
    transition_time     BIGINT NOT NULL,
    need_validate       TINYINT NOT NULL DEFAULT 0,
    canonical_resultid  BIGINT NOT NULL DEFAULT 0,
    canonical_credit    DOUBLE NOT NULL DEFAULT 0,
    -- CT_AS_*: 0 init, 1 ready, 2 done
    assimilate_state    TINYINT NOT NULL DEFAULT 0,
    -- CT_WU_ERR_* bits: 1 couldnt_send, 2 too_many_errors,
    -- 4 too_many_success, 8 too_many_total, 16 canceled
    error_mask          INT NOT NULL DEFAULT 0,
    file_delete_state   TINYINT NOT NULL DEFAULT 0,
    UNIQUE KEY wu_name (name),
    KEY wu_transition (transition_time),
    KEY wu_validate (need_validate),
    KEY wu_assimilate (assimilate_state),
    KEY wu_file_delete (file_delete_state),
    KEY wu_round (roundid, shard),
    KEY wu_job (jobid, round_idx, shard)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE result (
    id                  BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    create_time         BIGINT NOT NULL,
    name                VARCHAR(80) NOT NULL,    -- "<wu name>-<n>", n from 0
    workunitid          BIGINT NOT NULL,
    jobid               BIGINT NOT NULL,
    -- CT_RS_*: 2 unsent, 4 in_progress, 5 over
    server_state        TINYINT NOT NULL DEFAULT 2,
    -- CT_RO_*: 0 init, 1 success, 3 client_error, 4 no_reply,
    -- 6 validate_error, 7 didnt_need
    outcome             TINYINT NOT NULL DEFAULT 0,
    -- CT_VS_*: 0 init, 1 valid, 2 invalid, 4 inconclusive, 5 too_late
    validate_state      TINYINT NOT NULL DEFAULT 0,
    file_delete_state   TINYINT NOT NULL DEFAULT 0,
    hostid              BIGINT NOT NULL DEFAULT 0,
    userid              BIGINT NOT NULL DEFAULT 0,
    teamid              BIGINT NOT NULL DEFAULT 0,
    priority            INT NOT NULL DEFAULT 0,
    sent_time           BIGINT NOT NULL DEFAULT 0,
    report_deadline     BIGINT NOT NULL DEFAULT 0,
    received_time       BIGINT NOT NULL DEFAULT 0,
    -- the upload as the server received it (hash computed by the server)
    upload_sha256       CHAR(64) NOT NULL DEFAULT '',
    upload_size         BIGINT NOT NULL DEFAULT 0,
    upload_time         BIGINT NOT NULL DEFAULT 0,
    -- what the client reported
    exit_status         INT NOT NULL DEFAULT 0,
    error_message       VARCHAR(255) NOT NULL DEFAULT '',
    elapsed_s           DOUBLE NOT NULL DEFAULT 0,
    final_loss          DOUBLE NULL,             -- training loss of the last step, as claimed
    conforming          TINYINT NOT NULL DEFAULT 0,  -- computed on a conforming device (as reported)
    -- filled by the validator
    probe_loss          DOUBLE NULL,
    update_norm         DOUBLE NULL,
    validate_time       BIGINT NOT NULL DEFAULT 0,
    granted_credit      DOUBLE NOT NULL DEFAULT 0,
    UNIQUE KEY result_name (name),
    KEY result_dispatch (server_state, priority DESC, id),
    KEY result_wu_user (workunitid, userid),
    KEY result_host (hostid, server_state),
    KEY result_user (userid, id),
    KEY result_file_delete (file_delete_state),
    KEY result_job (jobid)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- One row per credit grant (granted exactly once per result: resultid is
-- unique, so a re-run of the validator cannot grant twice).
CREATE TABLE credit_event (
    id              BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    create_time     BIGINT NOT NULL,
    resultid        BIGINT NOT NULL,
    workunitid      BIGINT NOT NULL,
    jobid           BIGINT NOT NULL,
    userid          BIGINT NOT NULL,
    hostid          BIGINT NOT NULL,
    teamid          BIGINT NOT NULL DEFAULT 0,
    credit          DOUBLE NOT NULL,                -- cobblestones
    UNIQUE KEY credit_result (resultid),
    KEY credit_user (userid, create_time),
    KEY credit_host (hostid, create_time),
    KEY credit_team (teamid, create_time),
    KEY credit_time (create_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Liveness of each running role (for `status` and the web status page).
CREATE TABLE role_heartbeat (
    role            VARCHAR(32) NOT NULL,
    instance        VARCHAR(128) NOT NULL,   -- "<hostname>:<pid>"
    start_time      BIGINT NOT NULL,
    beat_time       BIGINT NOT NULL,
    nruns           BIGINT NOT NULL DEFAULT 0,
    nitems          BIGINT NOT NULL DEFAULT 0,   -- rows handled in total
    last_error      VARCHAR(255) NOT NULL DEFAULT '',
    PRIMARY KEY (role, instance)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
