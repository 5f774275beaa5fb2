-- A claim whose replay is a plain read (dev.exactly:idempotency-postgres): <table>_claim_fresh inserts a fresh
-- key and returns its creation time, or null when the key is taken, as a scalar. The store calls it from a
-- CASE of the statement that reads a finished record by primary key (a one-row join), so the function runs
-- only when there is no finished record, and a replay's plan is that read's: one index scan and a
-- projection, without V7's UNION of a function scan, whose start-up (a tuple store and a row type of eleven
-- columns) every replay paid although the branch never ran. A fresh key is this function's one INSERT ...
-- ON CONFLICT DO NOTHING; its lease end and expiry are the creation time plus the lease and the retention,
-- which the store adds itself. Counted under callgrind (PostgreSQL 15, the store's statements), the
-- database's instructions per replay fell by a third and per fresh key by an eighth. A key that is taken (in
-- flight, expired, a lease to take over, or inserted by a transaction that committed after the statement's
-- snapshot) gets null, and the store then calls V4's function, which decides and returns the row. V7's
-- function stays for the stores of earlier versions. Applied on top of V9; may run again.
CREATE OR REPLACE FUNCTION idempotency_records_claim_fresh(
        p_key text, p_fingerprint text, p_owner text, p_lease_micros bigint, p_retention_micros bigint)
    RETURNS timestamptz
    LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    created timestamptz;
BEGIN
    INSERT INTO idempotency_records (
        scope_key, status, fingerprint, owner_token, created_at, lease_expires_at,
        expires_at, retention, takeovers, updated_at, purge_after)
    VALUES (
        p_key, 'PROCESSING', p_fingerprint, p_owner, statement_timestamp(),
        statement_timestamp() + p_lease_micros * interval '1 microsecond',
        statement_timestamp() + p_retention_micros * interval '1 microsecond',
        p_retention_micros * interval '1 microsecond', 0, statement_timestamp(),
        statement_timestamp() + p_retention_micros * interval '1 microsecond')
    ON CONFLICT (scope_key) DO NOTHING
    RETURNING created_at INTO created;
    RETURN created;
END
$$;
