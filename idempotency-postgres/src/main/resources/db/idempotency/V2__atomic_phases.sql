-- Atomic phases (dev.exactly:idempotency-postgres, AtomicPhases): what a multi-step owner committed so far,
-- and recovery's bookkeeping. Applied on top of V1; every statement may run again.

-- the state of the last checkpoint (its name is recovery_point); small, owner-defined bytes
ALTER TABLE idempotency_records ADD COLUMN IF NOT EXISTS checkpoint_state bytea NULL;
-- failed attempts to finish the phase (recovery retries after a backoff; dead-letters after the last)
ALTER TABLE idempotency_records ADD COLUMN IF NOT EXISTS attempts integer NOT NULL DEFAULT 0;
ALTER TABLE idempotency_records ADD COLUMN IF NOT EXISTS last_error text NULL;
-- set when recovery gave up: nobody takes the record over until an operator does
ALTER TABLE idempotency_records ADD COLUMN IF NOT EXISTS dead_lettered_at timestamptz NULL;

-- recovery: phases in progress (they never expire: expires_at = 'infinity') whose lease ran out
CREATE INDEX IF NOT EXISTS idempotency_records_phases_idx
    ON idempotency_records (lease_expires_at)
    WHERE status = 'PROCESSING' AND expires_at = 'infinity' AND dead_lettered_at IS NULL;
