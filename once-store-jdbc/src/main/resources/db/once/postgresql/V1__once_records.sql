-- Once idempotency records for PostgreSQL (11 or later).
--
-- Usable as a Flyway or Liquibase versioned migration as it stands when the table keeps its default
-- name. PostgresStore.builder(...).autoCreateSchema(true) runs this same file, with every
-- "once_records" replaced by the configured (validated) table name.

-- One row per (scope, key). The primary key is the unique index every claim relies on.
CREATE TABLE IF NOT EXISTS once_records (
  scope          varchar(512) NOT NULL,   -- who owns the key; unicode, compared exactly
  idem_key       varchar(255) NOT NULL,   -- the idempotency key: printable ASCII, case-sensitive
  state          varchar(16)  NOT NULL CHECK (state IN ('IN_PROGRESS', 'COMPLETED', 'FAILED_FINAL')),
  fingerprint    varchar(140) NOT NULL,   -- '<version>:<hex digest>' of the request
  token          bigint       NOT NULL,   -- fencing token of the current lease, from once_records_seq
  attempt        integer      NOT NULL,   -- 1 for the first lease, +1 for every lease taken over
  lease_until    timestamptz  NOT NULL,   -- end of the current lease, by the database clock
  expires_at     timestamptz  NOT NULL,   -- after this the record counts as absent and may be purged
  recovery_point bytea,                   -- last checkpoint of a lease holder, handed to a thief
  result         bytea,                   -- stored outcome once COMPLETED or FAILED_FINAL
  created_at     timestamptz  NOT NULL,
  watched        boolean      NOT NULL DEFAULT false,  -- someone waits for a change (see below)
  PRIMARY KEY (scope, idem_key)
);

-- Store-wide fencing tokens: never granted twice, even for a key released or purged in between.
CREATE SEQUENCE IF NOT EXISTS once_records_seq AS bigint;

-- Purge walks expired records in expires_at order, a batch at a time.
CREATE INDEX IF NOT EXISTS once_records_expires_idx ON once_records (expires_at);

-- Change notifications for waiters (PostgresStore.awaitChange): one NOTIFY on channel
-- 'once_changes' per transition that matters to a waiter, delivered when the transaction commits.
-- The payload is '<table>\n<scope>\n<key>' (neither scope nor key can contain a newline).
-- Only records a waiter has marked 'watched' notify: PostgreSQL serialises the commits of all
-- transactions that NOTIFY (a global lock held through the commit's WAL flush), which cut
-- claim+complete throughput at 32 threads by a factor of five when every completion notified.
-- Waiters are rare (duplicates arriving while the first request runs), so almost no commit pays.
CREATE OR REPLACE FUNCTION once_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('once_changes', TG_TABLE_NAME || chr(10) || OLD.scope || chr(10) || OLD.idem_key);
  RETURN NULL;
END
$$;

-- Completion, final failure and lease takeover change state or token; heartbeats and checkpoints
-- change neither and stay silent.
DROP TRIGGER IF EXISTS once_records_changed ON once_records;
CREATE TRIGGER once_records_changed AFTER UPDATE ON once_records FOR EACH ROW
  WHEN (OLD.watched AND (OLD.state IS DISTINCT FROM NEW.state OR OLD.token <> NEW.token))
  EXECUTE FUNCTION once_notify_change();

-- A release deletes an in-progress record; purging expired terminal records stays silent.
DROP TRIGGER IF EXISTS once_records_released ON once_records;
CREATE TRIGGER once_records_released AFTER DELETE ON once_records FOR EACH ROW
  WHEN (OLD.watched AND OLD.state = 'IN_PROGRESS')
  EXECUTE FUNCTION once_notify_change();
