-- Once idempotency records for MariaDB (10.3 or later; tested on 10.11).
--
-- Usable as a Flyway or Liquibase versioned migration as it stands when the table keeps its default
-- name. MariaDbStore.builder(...).autoCreateSchema(true) runs this same file, with every
-- "once_records" replaced by the configured (validated) table name.

-- Store-wide fencing tokens: never granted twice, even for a key released or purged in between.
-- A sequence hands out values outside the caller's transaction, so it is no hot row.
CREATE SEQUENCE IF NOT EXISTS once_records_seq;

-- One row per (scope, key); the primary key is the unique index every claim relies on.
-- Scopes are unicode and compared byte for byte: utf8mb4 with a binary NO PAD collation, so that
-- neither case nor trailing spaces make two scopes equal. Keys are printable ASCII, case-sensitive.
-- The key is at most 512 * 4 + 255 = 2303 bytes, within InnoDB's 3072-byte limit.
CREATE TABLE IF NOT EXISTS once_records (
  scope          VARCHAR(512) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  idem_key       VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  state          VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  fingerprint    VARCHAR(140) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  token          BIGINT       NOT NULL,   -- fencing token of the current lease, from once_records_seq
  attempt        INT          NOT NULL,   -- 1 for the first lease, +1 for every lease taken over
  lease_until    DATETIME(6)  NOT NULL,   -- UTC, by the database clock
  expires_at     DATETIME(6)  NOT NULL,   -- UTC; after this the record counts as absent
  recovery_point LONGBLOB,                -- last checkpoint of a lease holder, handed to a thief
  result         LONGBLOB,                -- stored outcome once COMPLETED or FAILED_FINAL
  created_at     DATETIME(6)  NOT NULL,
  PRIMARY KEY (scope, idem_key),
  -- Purge deletes expired records in expires_at order, a batch at a time.
  KEY once_records_expires_idx (expires_at),
  CONSTRAINT once_records_state CHECK (state IN ('IN_PROGRESS', 'COMPLETED', 'FAILED_FINAL'))
) ENGINE = InnoDB ROW_FORMAT = DYNAMIC;
