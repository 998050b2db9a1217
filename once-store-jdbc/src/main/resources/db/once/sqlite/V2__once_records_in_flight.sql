-- Once idempotency records for the embedded store: the index behind the operator's in-flight
-- listing (IdempotencyStore.inFlight: in-progress records oldest first). EmbeddedStore applies it
-- after V1 when it opens its file; safe to run again.
--
-- Partial, so it holds in-progress records only, never the bulk of finished records.
CREATE INDEX IF NOT EXISTS once_records_in_flight_idx ON once_records (created_at)
  WHERE state = 'IN_PROGRESS';
