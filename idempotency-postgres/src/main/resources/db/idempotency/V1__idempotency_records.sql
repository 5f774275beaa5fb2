-- Idempotency records of dev.exactly:idempotency-postgres.
-- The table name is unqualified, so the table lands in the first schema of the connection's search_path.
-- Apply with PostgresIdempotencyStore.migrate(DataSource), or run this file through Flyway.

CREATE TABLE IF NOT EXISTS idempotency_records (
    -- SHA-256 of tenant, method, route and key (64 hex digits): the unique constraint on the scope
    scope_key        text        NOT NULL,
    -- PROCESSING, COMPLETED or FAILED; a released record is deleted
    status           text        NOT NULL,
    -- algorithm:digest of the request that claimed the key
    fingerprint      text        NOT NULL,
    -- fencing token of the current (or, once finished, the last) owner
    owner_token      text        NULL,
    created_at       timestamptz NOT NULL,
    -- while PROCESSING: when another request may take over
    lease_expires_at timestamptz NULL,
    -- when the record is forgotten; purged in bounded batches
    expires_at       timestamptz NOT NULL,
    -- how long a finished record is kept, counted from the time it finished
    retention        interval    NOT NULL,
    -- how many times an expired lease was taken over since the key was first claimed
    takeovers        integer     NOT NULL DEFAULT 0,
    response_status  integer     NULL,
    -- header name/value pairs, flattened and in order: {name1,value1,name2,value2,...}
    response_headers text[]      NULL,
    response_body    bytea       NULL,
    -- free-form progress marker of a multi-phase owner (e.g. 'charge_created')
    recovery_point   text        NULL,
    updated_at       timestamptz NOT NULL,
    CONSTRAINT idempotency_records_pkey PRIMARY KEY (scope_key),
    CONSTRAINT idempotency_records_status_check CHECK (
        (status = 'PROCESSING' AND owner_token IS NOT NULL AND lease_expires_at IS NOT NULL)
        OR (status IN ('COMPLETED', 'FAILED') AND response_status IS NOT NULL
            AND response_headers IS NOT NULL AND response_body IS NOT NULL))
);

-- purge: DELETE ... WHERE expires_at <= now() ORDER BY expires_at LIMIT n
CREATE INDEX IF NOT EXISTS idempotency_records_expires_at_idx
    ON idempotency_records (expires_at);

-- recovery: processing records whose lease has run out
CREATE INDEX IF NOT EXISTS idempotency_records_lease_idx
    ON idempotency_records (lease_expires_at) WHERE status = 'PROCESSING';
