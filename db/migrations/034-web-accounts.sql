-- Accounts on the web (doc/web.md): password recovery links (the SHA-256
-- of a one-time token, valid until expire_time; `ctune-server user
-- reset-link` makes them) and a short public profile text.
CREATE TABLE IF NOT EXISTS password_reset (
    token_hash  CHAR(64) NOT NULL PRIMARY KEY,
    userid      BIGINT NOT NULL,
    expire_time BIGINT NOT NULL,
    KEY password_reset_user (userid)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

ALTER TABLE `user` ADD COLUMN IF NOT EXISTS profile VARCHAR(1024) NOT NULL DEFAULT '';
-- display names are unique (server/rpc/account.c checks; the index finds them)
CREATE INDEX IF NOT EXISTS user_name ON `user` (name);
