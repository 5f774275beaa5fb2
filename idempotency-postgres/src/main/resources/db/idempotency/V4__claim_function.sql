-- The claim as one function call (dev.exactly:idempotency-postgres): a replay of a finished record is a
-- plain read by primary key and returns at once, without the insert's executor, index and row locks; any
-- other claim inserts, replaces an expired record, takes over an expired lease, or reads the record in
-- flight, in one INSERT ... ON CONFLICT DO UPDATE ... WHERE. Called as one statement, so a claim stays one
-- atomic step and one round trip. Applied on top of V3; may run again.
CREATE OR REPLACE FUNCTION idempotency_records_claim(
        p_key text, p_fingerprint text, p_owner text, p_lease_micros bigint, p_retention_micros bigint)
    RETURNS TABLE (is_claimed boolean, rec idempotency_records)
    LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    -- a finished, unexpired record: a replay takes no row lock, no transaction id and writes no WAL
    RETURN QUERY
        SELECT false, f
        FROM idempotency_records f
        WHERE f.scope_key = p_key AND f.status <> 'PROCESSING' AND f.expires_at > statement_timestamp();
    IF FOUND THEN
        RETURN;
    END IF;
    -- Insert, or replace an expired record, or take over a processing record whose lease expired if the
    -- fingerprint matches and recovery did not give up on it (a dead letter waits for an operator); a
    -- takeover keeps what the previous owner committed (its checkpoint, attempts, and the endless expiry of
    -- a phase in progress). Otherwise ON CONFLICT DO UPDATE ... WHERE leaves the row unchanged but locked
    -- (a record that finished since the read above included), and existing returns it: FOR SHARE makes a
    -- READ COMMITTED scan follow the row to its latest committed version. A row inserted by a transaction
    -- that committed after this query's snapshot is not visible to existing at all; the call then returns
    -- no row and the store runs it again.
    RETURN QUERY
        WITH taken AS (
            INSERT INTO idempotency_records AS r (
                scope_key, status, fingerprint, owner_token, created_at, lease_expires_at,
                expires_at, retention, takeovers, updated_at)
            VALUES (
                p_key, 'PROCESSING', p_fingerprint, p_owner, statement_timestamp(),
                statement_timestamp() + p_lease_micros * interval '1 microsecond',
                statement_timestamp() + p_retention_micros * interval '1 microsecond',
                p_retention_micros * interval '1 microsecond', 0, statement_timestamp())
            ON CONFLICT (scope_key) DO UPDATE SET
                status = 'PROCESSING',
                fingerprint = excluded.fingerprint,
                owner_token = excluded.owner_token,
                created_at = CASE WHEN r.expires_at <= statement_timestamp()
                                  THEN excluded.created_at ELSE r.created_at END,
                lease_expires_at = excluded.lease_expires_at,
                expires_at = CASE WHEN r.expires_at = 'infinity'
                                  THEN r.expires_at ELSE excluded.expires_at END,
                retention = excluded.retention,
                takeovers = CASE WHEN r.expires_at <= statement_timestamp()
                                 THEN 0 ELSE r.takeovers + 1 END,
                response_status = NULL,
                response_headers = NULL,
                response_body = NULL,
                recovery_point = CASE WHEN r.expires_at <= statement_timestamp()
                                      THEN NULL ELSE r.recovery_point END,
                checkpoint_state = CASE WHEN r.expires_at <= statement_timestamp()
                                        THEN NULL ELSE r.checkpoint_state END,
                attempts = CASE WHEN r.expires_at <= statement_timestamp()
                                THEN 0 ELSE r.attempts END,
                last_error = CASE WHEN r.expires_at <= statement_timestamp()
                                  THEN NULL ELSE r.last_error END,
                dead_lettered_at = NULL,
                waiters = CASE WHEN r.expires_at <= statement_timestamp()
                               THEN false ELSE r.waiters END,
                updated_at = excluded.updated_at
            WHERE r.expires_at <= statement_timestamp()
               OR (r.status = 'PROCESSING'
                   AND r.lease_expires_at <= statement_timestamp()
                   AND r.dead_lettered_at IS NULL
                   AND r.fingerprint = excluded.fingerprint)
            RETURNING r.*
        ),
        existing AS (
            SELECT e
            FROM idempotency_records e
            WHERE e.scope_key = p_key AND NOT EXISTS (SELECT 1 FROM taken)
            FOR SHARE
        )
        SELECT true, t::idempotency_records FROM taken t
        UNION ALL
        SELECT false, x.e FROM existing x;
END
$$;
