-- The claim of a fresh key as the first thing the claim does (dev.exactly:idempotency-postgres): a second
-- claim function, <table>_claim_record, that tries INSERT ... ON CONFLICT DO NOTHING first and returns the
-- record's columns themselves instead of the whole row. The store reads a finished record by primary key
-- before it calls the function (a replay never gets here), so most calls are fresh keys: they now insert at
-- once, without the function of V4's first read of the same row, without the ON CONFLICT DO UPDATE's
-- twenty-column projection (which the executor builds before it knows whether it is needed), and without
-- building and taking apart a composite row. A key that is there already (in flight, finished since the
-- store's read, expired, or with a lease to take over) meets the conflict, which takes no lock and writes
-- nothing, and goes on exactly as V4's function does. V4's function stays as it is, for the stores of
-- earlier versions and for the claim of an atomic phase, which reads every column. Applied on top of V6;
-- may run again.
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
            expires_at, retention, takeovers, updated_at)
        VALUES (
            p_key, 'PROCESSING', p_fingerprint, p_owner, statement_timestamp(),
            statement_timestamp() + p_lease_micros * interval '1 microsecond',
            statement_timestamp() + p_retention_micros * interval '1 microsecond',
            p_retention_micros * interval '1 microsecond', 0, statement_timestamp())
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
