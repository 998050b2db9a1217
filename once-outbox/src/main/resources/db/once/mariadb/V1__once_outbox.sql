-- Once outbox for MariaDB (10.6 or later: claims use SKIP LOCKED; tested on 10.11).
--
-- Usable as a Flyway or Liquibase versioned migration as it stands when the table keeps its default
-- name. Outbox.mariaDb(...).autoCreateSchema(true) runs this same file, with every "once_outbox"
-- replaced by the configured (validated) table name. Times are UTC, by the database clock.
CREATE TABLE IF NOT EXISTS once_outbox (
  id            BIGINT        NOT NULL AUTO_INCREMENT PRIMARY KEY,
  message_id    VARCHAR(255)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  destination   VARCHAR(1024) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  message_key   VARCHAR(1024) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
  headers       TEXT          CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
  payload       LONGBLOB      NOT NULL,
  state         VARCHAR(16)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  attempts      INT           NOT NULL,
  available_at  DATETIME(6)   NOT NULL,
  created_at    DATETIME(6)   NOT NULL,
  delivered_at  DATETIME(6),
  last_error    VARCHAR(1000) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
  UNIQUE KEY once_outbox_message_idx (message_id),
  -- MariaDB has no partial indexes: the state leads, so claims and purges read one range each.
  KEY once_outbox_due_idx (state, available_at),
  KEY once_outbox_delivered_idx (state, delivered_at),
  CONSTRAINT once_outbox_state CHECK (state IN ('PENDING', 'DELIVERED', 'DEAD'))
) ENGINE = InnoDB ROW_FORMAT = DYNAMIC;
