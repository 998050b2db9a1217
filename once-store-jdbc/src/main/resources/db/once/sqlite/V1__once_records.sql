-- Once idempotency records for the embedded store (SQLite 3.35 or later, in WAL mode).
--
-- EmbeddedStore creates this schema itself when it opens its file, with every "once_records"
-- replaced by the configured (validated) table name. Times are microseconds since the epoch, by
-- the store's clock (the only node writing the file, so there is no skew to guard against).

-- One row per (scope, key). TEXT compares with SQLite's BINARY collation: exact, case-sensitive.
-- A rowid table, not WITHOUT ROWID: results can be large, and rowid tables keep them out of the
-- primary key's b-tree pages.
CREATE TABLE IF NOT EXISTS once_records (
  scope          TEXT    NOT NULL,
  idem_key       TEXT    NOT NULL,
  state          TEXT    NOT NULL CHECK (state IN ('IN_PROGRESS', 'COMPLETED', 'FAILED_FINAL')),
  fingerprint    TEXT    NOT NULL,
  token          INTEGER NOT NULL,   -- fencing token of the current lease, from once_records_seq
  attempt        INTEGER NOT NULL,   -- 1 for the first lease, +1 for every lease taken over
  lease_until    INTEGER NOT NULL,   -- microseconds since the epoch
  expires_at     INTEGER NOT NULL,   -- microseconds since the epoch; after this the record is absent
  recovery_point BLOB,
  result         BLOB,
  created_at     INTEGER NOT NULL,
  PRIMARY KEY (scope, idem_key)
);

-- Fencing tokens: one counter row, drawn in the claim's own transaction (SQLite has one writer).
CREATE TABLE IF NOT EXISTS once_records_seq (
  id    INTEGER PRIMARY KEY CHECK (id = 1),
  value INTEGER NOT NULL
);
INSERT OR IGNORE INTO once_records_seq (id, value) VALUES (1, 0);

-- Purge deletes expired records in expires_at order, a batch at a time.
CREATE INDEX IF NOT EXISTS once_records_expires_idx ON once_records (expires_at);
