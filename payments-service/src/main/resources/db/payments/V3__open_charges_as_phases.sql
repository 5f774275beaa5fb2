-- Open charges become open atomic phases. Since this version the durable record of a charge is an
-- atomic phase (dev.exactly:idempotency-postgres, AtomicPhases): from its first checkpoint, committed with
-- the charge row, it never expires until the charge is finished, and recovery, attempts and dead letters
-- are kept on it. Before, the charge row kept them, and a long outage could let the record of a pending
-- charge expire. Here every pending or dead-lettered charge gets a record in that shape: never expiring,
-- with the row's recovery point, attempts, last error and dead letter. A record whose owner still holds
-- a live lease keeps its owner; any other gets an owner token nobody holds and a lease that has just
-- ended, so recovery takes it over at once. Runs after the idempotency set's V2 (its columns).

INSERT INTO idempotency_records AS r (scope_key, status, fingerprint, owner_token, created_at, lease_expires_at,
        expires_at, retention, takeovers, recovery_point, updated_at, attempts, last_error, dead_lettered_at)
SELECT c.scope_key, 'PROCESSING', c.fingerprint, replace(gen_random_uuid()::text, '-', ''), c.created_at,
       statement_timestamp(), 'infinity', interval '24 hours', 0, c.recovery_point, statement_timestamp(),
       c.attempts, c.last_error,
       CASE WHEN c.status = 'dead_lettered' THEN coalesce(c.dead_lettered_at, statement_timestamp()) END
FROM payments_charge c
WHERE c.status IN ('pending', 'dead_lettered')
ON CONFLICT (scope_key) DO UPDATE
SET expires_at = 'infinity',
    recovery_point = EXCLUDED.recovery_point,
    attempts = EXCLUDED.attempts,
    last_error = EXCLUDED.last_error,
    dead_lettered_at = EXCLUDED.dead_lettered_at,
    owner_token = CASE WHEN r.lease_expires_at > statement_timestamp() AND r.expires_at > statement_timestamp()
                       THEN r.owner_token ELSE EXCLUDED.owner_token END,
    lease_expires_at = CASE WHEN r.lease_expires_at > statement_timestamp() AND r.expires_at > statement_timestamp()
                            THEN r.lease_expires_at ELSE statement_timestamp() END,
    updated_at = statement_timestamp()
WHERE r.status = 'PROCESSING';
