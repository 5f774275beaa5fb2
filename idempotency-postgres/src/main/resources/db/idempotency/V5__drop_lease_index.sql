-- Drops the lease index of V1 (dev.exactly:idempotency-postgres). No statement of the store needs it:
-- every transition finds its row by primary key, and recovery's takeover of expired phases has its own
-- partial index (V2). It cost an index entry on every claim, and it misled the planner: with statistics
-- taken while few records were in flight, an owner's completion (WHERE scope_key = ? AND status =
-- 'PROCESSING' ...) could scan every record in flight through it instead of reading one by primary key.
-- Applied on top of V4; may run again.
DROP INDEX IF EXISTS idempotency_records_lease_idx;
