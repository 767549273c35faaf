-- db/migrations/045-chain-settled.sql - a result that won a dispute
-- settled by bisection (doc/validation.md "Disputes settled by
-- bisection") keeps the link the server recomputed for it, so that its
-- round's receipt can state its chain (doc/receipts.md): its links before
-- that one were reported the same by the other replica, that one the
-- server computed itself, and its last is its result's hash. -1: the
-- result won no dispute. May run again (IF NOT EXISTS).
ALTER TABLE result_chain ADD COLUMN IF NOT EXISTS settled_link INT NOT NULL DEFAULT -1;
