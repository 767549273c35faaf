-- db/migrations/039-device-sig.sql - a host's device description as one
-- digest (sha256 hex of what its last RPC said of its devices, '' not
-- yet), read with the host, so that an RPC whose devices did not change
-- reads no device row. May run again (IF NOT EXISTS).
ALTER TABLE host ADD COLUMN IF NOT EXISTS device_sig CHAR(64) CHARACTER SET ascii NOT NULL
    DEFAULT '';
