-- Tables of the payment service. Unqualified names: created in the connection's current schema, next to
-- the ledger (db/ledger) and the idempotency records (db/idempotency), each set with its own Flyway
-- history table.

-- One row per logical charge. The row is the durable memory of a request: its scope key is unique and
-- is never deleted, so a retry long after the idempotency record expired still finds the charge (and
-- its fingerprint) instead of charging again.
CREATE TABLE payments_charge (
    id                   text        NOT NULL,
    tenant               text        NOT NULL,
    -- SHA-256 of tenant, method, route and Idempotency-Key: the same key the idempotency record has
    scope_key            text        NOT NULL,
    -- algorithm:digest of the request that created the charge
    fingerprint          text        NOT NULL,
    customer             text        NOT NULL,
    amount               bigint      NOT NULL,
    currency             text        NOT NULL,
    description          text        NULL,
    metadata             text        NOT NULL,
    -- pending -> succeeded | failed; pending -> dead_lettered -> (operator) pending | succeeded | failed
    status               text        NOT NULL,
    -- charge_created -> processor_called (an attempt's outcome was unknown) -> finished
    recovery_point       text        NOT NULL,
    -- the processor's Idempotency-Key, derived from the charge id
    downstream_key       text        NOT NULL,
    -- the exact request sent to the processor (JSON), persisted before the first send
    processor_request    text        NOT NULL,
    processor_charge_id  text        NULL,
    failure_code         text        NULL,
    failure_message      text        NULL,
    ledger_entry_id      bigint      NULL,
    amount_refunded      bigint      NOT NULL DEFAULT 0,
    -- the response of the finished request, replayed byte for byte
    response_status      integer     NULL,
    response_type        text        NULL,
    response_body        bytea       NULL,
    -- recovery bookkeeping
    attempts             integer     NOT NULL DEFAULT 0,
    last_error           text        NULL,
    dead_letter_reason   text        NULL,
    dead_lettered_at     timestamptz NULL,
    resolution           text        NULL,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    finished_at          timestamptz NULL,
    CONSTRAINT payments_charge_pkey PRIMARY KEY (id),
    CONSTRAINT payments_charge_scope_key UNIQUE (scope_key),
    CONSTRAINT payments_charge_downstream_key UNIQUE (downstream_key),
    CONSTRAINT payments_charge_amount_check CHECK (amount > 0),
    CONSTRAINT payments_charge_refund_check CHECK (amount_refunded >= 0 AND amount_refunded <= amount),
    CONSTRAINT payments_charge_status_check CHECK (status IN ('pending', 'succeeded', 'failed', 'dead_lettered')),
    CONSTRAINT payments_charge_finished_check CHECK (
        (status IN ('pending', 'dead_lettered'))
        OR (response_status IS NOT NULL AND response_type IS NOT NULL AND response_body IS NOT NULL)),
    CONSTRAINT payments_charge_entry_check CHECK (status <> 'succeeded' OR ledger_entry_id IS NOT NULL)
);

-- GET /v1/charges?customer=... (newest first, keyset on (created_at, id))
CREATE INDEX payments_charge_customer_idx ON payments_charge (tenant, customer, created_at DESC, id DESC);
-- the recovery worker and the operator listing
CREATE INDEX payments_charge_open_idx ON payments_charge (status, updated_at) WHERE status IN ('pending', 'dead_lettered');

-- One row per refund request that reached a decision (refused refunds too, so that their key keeps its
-- fingerprint and answer after the idempotency record expired).
CREATE TABLE payments_refund (
    id                   text        NOT NULL,
    tenant               text        NOT NULL,
    scope_key            text        NOT NULL,
    fingerprint          text        NOT NULL,
    -- the charge id as requested (it may name no charge of this tenant)
    charge_id            text        NOT NULL,
    amount               bigint      NOT NULL,
    currency             text        NULL,
    -- succeeded | refused
    status               text        NOT NULL,
    failure_code         text        NULL,
    ledger_entry_id      bigint      NULL,
    response_status      integer     NOT NULL,
    response_type        text        NOT NULL,
    response_body        bytea       NOT NULL,
    created_at           timestamptz NOT NULL,
    CONSTRAINT payments_refund_pkey PRIMARY KEY (id),
    CONSTRAINT payments_refund_scope_key UNIQUE (scope_key),
    CONSTRAINT payments_refund_status_check CHECK (status IN ('succeeded', 'refused')),
    CONSTRAINT payments_refund_entry_check CHECK (status <> 'succeeded' OR ledger_entry_id IS NOT NULL)
);

CREATE INDEX payments_refund_charge_idx ON payments_refund (charge_id);

-- How often each scope's answer was replayed (by either tier), for GET /v1/idempotency-keys/{key}.
CREATE TABLE payments_replay (
    scope_key            text        NOT NULL,
    replays              bigint      NOT NULL,
    last_replayed_at     timestamptz NOT NULL,
    CONSTRAINT payments_replay_pkey PRIMARY KEY (scope_key)
);
