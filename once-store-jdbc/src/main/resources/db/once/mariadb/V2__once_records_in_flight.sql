-- Once idempotency records for MariaDB: the index behind the operator's in-flight listing
-- (IdempotencyStore.inFlight: in-progress records oldest first). Apply after V1; safe to run again.
--
-- MariaDB has no partial indexes: (state, created_at) lets the listing read the in-progress
-- range in creation order without touching finished records.
CREATE INDEX IF NOT EXISTS once_records_in_flight_idx ON once_records (state, created_at);
