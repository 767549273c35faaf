-- db/migrations/005-hardening.sql - what the defences of doc/validation.md
-- store. Each statement may run again after a crash (IF NOT EXISTS).
--
-- Web sessions (server/web_account.c),
-- which the web module used to create at run time: a CREATE TABLE issued
-- while the server runs is not covered by the schema's crash safety (a
-- kill -9 shortly after it left an embedded database InnoDB would not
-- open again), so every table is created here, before the server serves.
-- The login cookie's token is never stored: only its SHA-256 (hex).

CREATE TABLE IF NOT EXISTS web_session (
    token_hash      CHAR(64) NOT NULL PRIMARY KEY,
    userid          BIGINT NOT NULL,
    create_time     BIGINT NOT NULL,
    expire_time     BIGINT NOT NULL,
    KEY web_session_user (userid),
    KEY web_session_expire (expire_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- The network (IPv4 /24 or IPv6 /48, server/rpc/eligibility.c) a result was
-- sent to: no two replicas of a WU go to one network unless the project
-- turns that off (sched.separate_networks). '' = no network recorded.
ALTER TABLE result ADD COLUMN IF NOT EXISTS sent_net VARCHAR(48) NOT NULL DEFAULT '';
