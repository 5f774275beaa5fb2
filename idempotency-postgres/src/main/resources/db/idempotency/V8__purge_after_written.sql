-- The purge's column as a plain one (dev.exactly:idempotency-postgres). V6 made purge_after a stored
-- generated column so that every writer of a row, whichever version of the store, kept it right; but
-- PostgreSQL (15) reads a generated column's expression from the catalogue, plans and compiles it again in
-- every INSERT and in every UPDATE of its inputs: about 17 us of a fresh claim's executor time and 10 of its
-- completion's (EXPLAIN ANALYZE medians), a quarter of what the two statements cost in the executor. Now the
-- claim functions write it (the claim's expiry), and nothing else has to: purge_after only has to stay a
-- lower bound of expires_at, which no statement of any version lowers once the claim set it (a renewal, a
-- checkpoint, a completion and a takeover only move the expiry later; a takeover with a shorter retention
-- lowers purge_after with it). A writer that does not know the column (a store or AtomicPhases of an earlier
-- version, or SQL of the application's own) gets the default, '-infinity': such a record is purged as soon as
-- it expires, like every other, only found by the purge among the first. The cost: a phase in progress
-- (endless expiry) keeps the purge_after of its claim instead of 'infinity', so a phase that runs past its
-- retention, or a dead letter, is read and skipped by every purge until it finishes (expires_at decides what
-- is deleted), and a record whose expiry SQL of the application's own shortens is purged once its purge_after
-- passed too (at most its retention later). DROP EXPRESSION (PostgreSQL 13 or later) keeps every row's value and does not rewrite the
-- table; the phases in progress, whose purge_after was 'infinity', get their claim's expiry back. The claim
-- functions of V4 and V7 are replaced by the same functions writing the column. Applied on top of V7; may run
-- again.

ALTER TABLE idempotency_records ALTER COLUMN purge_after DROP EXPRESSION IF EXISTS;
ALTER TABLE idempotency_records ALTER COLUMN purge_after SET DEFAULT '-infinity';
-- phases in progress had 'infinity', which their completion would no longer lower: their claim's expiry
UPDATE idempotency_records
SET purge_after = ((created_at AT TIME ZONE 'UTC') + retention) AT TIME ZONE 'UTC'
WHERE purge_after = 'infinity';

-- V4's function; an insert's purge_after is its expiry, a replaced record's the new expiry, and a takeover
-- keeps the lower of the old one and the new expiry
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
                expires_at, retention, takeovers, updated_at, purge_after)
            VALUES (
                p_key, 'PROCESSING', p_fingerprint, p_owner, statement_timestamp(),
                statement_timestamp() + p_lease_micros * interval '1 microsecond',
                statement_timestamp() + p_retention_micros * interval '1 microsecond',
                p_retention_micros * interval '1 microsecond', 0, statement_timestamp(),
                statement_timestamp() + p_retention_micros * interval '1 microsecond')
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
                updated_at = excluded.updated_at,
                purge_after = CASE WHEN r.expires_at <= statement_timestamp()
                                   THEN excluded.purge_after
                                   ELSE least(r.purge_after, excluded.expires_at) END
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

-- V7's function; a fresh key's purge_after is its expiry
CREATE OR REPLACE FUNCTION idempotency_records_claim_record(
        p_key text, p_fingerprint text, p_owner text, p_lease_micros bigint, p_retention_micros bigint)
    RETURNS TABLE (
        is_claimed boolean, status text, fingerprint text, owner_token text, created_at timestamptz,
        lease_expires_at timestamptz, expires_at timestamptz, takeovers integer, response_status integer,
        response_headers text[], response_body bytea)
    LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    -- A fresh key: the new record, with null fingerprint and owner (they are the caller's own).
    RETURN QUERY
        INSERT INTO idempotency_records AS r (
            scope_key, status, fingerprint, owner_token, created_at, lease_expires_at,
            expires_at, retention, takeovers, updated_at, purge_after)
        VALUES (
            p_key, 'PROCESSING', p_fingerprint, p_owner, statement_timestamp(),
            statement_timestamp() + p_lease_micros * interval '1 microsecond',
            statement_timestamp() + p_retention_micros * interval '1 microsecond',
            p_retention_micros * interval '1 microsecond', 0, statement_timestamp(),
            statement_timestamp() + p_retention_micros * interval '1 microsecond')
        ON CONFLICT (scope_key) DO NOTHING
        RETURNING true, 'PROCESSING'::text, NULL::text, NULL::text, r.created_at, r.lease_expires_at,
                  r.expires_at, 0, NULL::integer, NULL::text[], NULL::bytea;
    IF FOUND THEN
        RETURN;
    END IF;
    -- The key is taken: what V4's function does, in a statement of its own (a new snapshot, which sees
    -- the row the insert met if it has committed).
    RETURN QUERY
        SELECT c.is_claimed, (c.rec).status, (c.rec).fingerprint, (c.rec).owner_token, (c.rec).created_at,
               (c.rec).lease_expires_at, (c.rec).expires_at, (c.rec).takeovers, (c.rec).response_status,
               (c.rec).response_headers, (c.rec).response_body
        FROM idempotency_records_claim(p_key, p_fingerprint, p_owner, p_lease_micros, p_retention_micros) AS c;
END
$$;
