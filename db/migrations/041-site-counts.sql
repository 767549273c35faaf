-- db/migrations/041-site-counts.sql - the counts of the status page,
-- /metrics and the stats export's tables.xml (accounts, accounts with
-- credit, teams, computers, the accounts' total credit) without a scan of
-- `user` and host: each was a COUNT(*) or SUM() over every row (four
-- passes over 100k accounts, 40 ms of the status page's 59 in
-- bench/bench_web). May run again (IF NOT EXISTS; the triggers are
-- dropped first, the counts made again from the tables).
--
-- site_stat: 16 rows (slot = the row's id % 16), so that the triggers of
-- concurrent credit grants, which all change an account's total_credit,
-- spread over 16 rows instead of waiting on one. The figures are the sums
-- over the slots. A row deleted or moved out of the counts by an UPDATE
-- subtracts what it added. credit is a running double sum: it can differ
-- from a fresh SUM(total_credit) in the last bits after many updates
-- (1e-12 relative after 1e8; the pages show 3 to 6 digits).
CREATE TABLE IF NOT EXISTS site_stat (
    slot            TINYINT NOT NULL PRIMARY KEY,
    n_users         BIGINT NOT NULL DEFAULT 0,
    n_users_credit  BIGINT NOT NULL DEFAULT 0,
    n_teams         BIGINT NOT NULL DEFAULT 0,
    n_hosts         BIGINT NOT NULL DEFAULT 0,
    user_credit     DOUBLE NOT NULL DEFAULT 0
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

DROP TRIGGER IF EXISTS user_site_stat_insert;
DROP TRIGGER IF EXISTS user_site_stat_update;
DROP TRIGGER IF EXISTS user_site_stat_delete;
DROP TRIGGER IF EXISTS team_site_stat_insert;
DROP TRIGGER IF EXISTS team_site_stat_delete;
DROP TRIGGER IF EXISTS host_site_stat_insert;
DROP TRIGGER IF EXISTS host_site_stat_delete;

-- the counts as they are (run again after a crash, each sets the same)
DELETE FROM site_stat;
INSERT INTO site_stat (slot) VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9),
    (10), (11), (12), (13), (14), (15);
UPDATE site_stat s JOIN (SELECT id % 16 AS slot, COUNT(*) AS n, SUM(total_credit > 0) AS nc,
    SUM(total_credit) AS credit FROM `user` GROUP BY id % 16) u ON u.slot = s.slot
  SET s.n_users = u.n, s.n_users_credit = u.nc, s.user_credit = u.credit;
UPDATE site_stat s JOIN (SELECT id % 16 AS slot, COUNT(*) AS n FROM team GROUP BY id % 16) t
    ON t.slot = s.slot SET s.n_teams = t.n;
UPDATE site_stat s JOIN (SELECT id % 16 AS slot, COUNT(*) AS n FROM host GROUP BY id % 16) h
    ON h.slot = s.slot SET s.n_hosts = h.n;

-- Statements inside a trigger end mid-line (the migration runner cuts at
-- a ';' that ends a line). The update trigger runs on every change of an
-- account (a login's time, a credit grant): it tests first. An account's,
-- team's or computer's id never changes.
CREATE TRIGGER user_site_stat_insert AFTER INSERT ON `user` FOR EACH ROW
  UPDATE site_stat SET n_users = n_users + 1, n_users_credit = n_users_credit +
      (NEW.total_credit > 0), user_credit = user_credit + NEW.total_credit
  WHERE slot = NEW.id % 16;

CREATE TRIGGER user_site_stat_update AFTER UPDATE ON `user` FOR EACH ROW BEGIN
  IF NEW.total_credit <> OLD.total_credit THEN
    UPDATE site_stat SET n_users_credit = n_users_credit + (NEW.total_credit > 0) -
        (OLD.total_credit > 0), user_credit = user_credit + (NEW.total_credit - OLD.total_credit)
    WHERE slot = NEW.id % 16; END IF; END;

CREATE TRIGGER user_site_stat_delete AFTER DELETE ON `user` FOR EACH ROW
  UPDATE site_stat SET n_users = n_users - 1, n_users_credit = n_users_credit -
      (OLD.total_credit > 0), user_credit = user_credit - OLD.total_credit
  WHERE slot = OLD.id % 16;

CREATE TRIGGER team_site_stat_insert AFTER INSERT ON team FOR EACH ROW
  UPDATE site_stat SET n_teams = n_teams + 1 WHERE slot = NEW.id % 16;

CREATE TRIGGER team_site_stat_delete AFTER DELETE ON team FOR EACH ROW
  UPDATE site_stat SET n_teams = n_teams - 1 WHERE slot = OLD.id % 16;

CREATE TRIGGER host_site_stat_insert AFTER INSERT ON host FOR EACH ROW
  UPDATE site_stat SET n_hosts = n_hosts + 1 WHERE slot = NEW.id % 16;

CREATE TRIGGER host_site_stat_delete AFTER DELETE ON host FOR EACH ROW
  UPDATE site_stat SET n_hosts = n_hosts - 1 WHERE slot = OLD.id % 16;
