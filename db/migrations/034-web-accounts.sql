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

-- News items the operator posts (`ctune-server news add`), shown on /news,
-- the home page and the Atom feed /news.atom.
CREATE TABLE IF NOT EXISTS news (
    id          BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    create_time BIGINT NOT NULL,
    title       VARCHAR(200) NOT NULL,
    body        TEXT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
