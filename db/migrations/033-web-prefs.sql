-- Computing preferences set on the web (doc/web.md): one row per user
-- who saved some, the ctune prefs.conf lines of the keys the web sets
-- (server/web/web_prefs.c checks each), and when they were saved. The
-- scheduler sends them in every reply; each client applies them under its
-- own prefs.conf.
CREATE TABLE IF NOT EXISTS user_prefs (
    userid      BIGINT NOT NULL PRIMARY KEY,
    prefs       VARCHAR(2048) NOT NULL,
    mod_time    BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
