-- Once idempotency records for PostgreSQL: the index behind the operator's in-flight listing
-- (IdempotencyStore.inFlight: in-progress records oldest first). Apply after V1; safe to run again.
--
-- Partial, so it holds in-progress records only: a few per running request, never the bulk of
-- finished records kept for replay, and claims of finished keys never touch it. created_at is kept
-- when a lease is stolen, so the listing counts from the first claim.
CREATE INDEX IF NOT EXISTS once_records_in_flight_idx ON once_records (created_at)
  WHERE state = 'IN_PROGRESS';
