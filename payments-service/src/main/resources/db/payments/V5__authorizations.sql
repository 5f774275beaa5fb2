-- Authorize, then capture or void. A charge created with "capture": false ends phase 3 as 'authorized':
-- the processor holds the amount and the ledger holds it too (a pending entry, hold_entry_id). It is
-- resolved once, by a capture (in full or in part: status 'succeeded', amount_captured, ledger_entry_id the
-- capture entry) or a void (status 'voided'), each an action with its own idempotency key.

ALTER TABLE payments_charge
    -- the ledger's pending entry of an authorized charge
    ADD COLUMN hold_entry_id bigint NULL,
    -- minor units captured: set by the capture of an authorization (NULL for a charge captured at once,
    -- which captured its whole amount)
    ADD COLUMN amount_captured bigint NULL;

ALTER TABLE payments_charge DROP CONSTRAINT payments_charge_status_check;
ALTER TABLE payments_charge ADD CONSTRAINT payments_charge_status_check
    CHECK (status IN ('pending', 'succeeded', 'failed', 'dead_lettered', 'authorized', 'voided'));
ALTER TABLE payments_charge ADD CONSTRAINT payments_charge_hold_check
    CHECK (status NOT IN ('authorized', 'voided') OR hold_entry_id IS NOT NULL);
ALTER TABLE payments_charge ADD CONSTRAINT payments_charge_captured_check
    CHECK (amount_captured IS NULL OR (amount_captured > 0 AND amount_captured <= amount
                                        AND amount_refunded <= amount_captured));

-- the expiry worker: authorized charges, oldest first
CREATE INDEX payments_charge_authorized_idx ON payments_charge (created_at) WHERE status = 'authorized';

-- One row per capture or void request that reached a decision or started: its scope key is unique and
-- kept forever, like a charge's, so a late retry replays the answer. At most one action per charge is
-- pending or succeeded (the partial unique index): a capture and a void, or two captures with different
-- keys, can never both run or both succeed.
CREATE TABLE payments_charge_action (
    id                   text        NOT NULL,
    tenant               text        NOT NULL,
    scope_key            text        NOT NULL,
    fingerprint          text        NOT NULL,
    charge_id            text        NOT NULL,
    -- capture | void
    kind                 text        NOT NULL,
    -- api (a client's request) | expiry (the recovery worker voiding an expired authorization)
    origin               text        NOT NULL,
    -- the capture's requested amount; NULL: the whole authorization
    amount               bigint      NULL,
    -- pending -> succeeded | refused
    status               text        NOT NULL,
    -- the processor's Idempotency-Key, derived from the charge id and the operation
    downstream_key       text        NOT NULL,
    failure_code         text        NULL,
    ledger_entry_id      bigint      NULL,
    response_status      integer     NULL,
    response_type        text        NULL,
    response_location    text        NULL,
    response_body        bytea       NULL,
    attempts             integer     NOT NULL DEFAULT 0,
    last_error           text        NULL,
    dead_letter_reason   text        NULL,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    finished_at          timestamptz NULL,
    CONSTRAINT payments_charge_action_pkey PRIMARY KEY (id),
    CONSTRAINT payments_charge_action_scope_key UNIQUE (scope_key),
    CONSTRAINT payments_charge_action_charge_fk FOREIGN KEY (charge_id) REFERENCES payments_charge (id),
    CONSTRAINT payments_charge_action_kind_check CHECK (kind IN ('capture', 'void')),
    CONSTRAINT payments_charge_action_origin_check CHECK (origin IN ('api', 'expiry')),
    CONSTRAINT payments_charge_action_status_check CHECK (status IN ('pending', 'succeeded', 'refused')),
    CONSTRAINT payments_charge_action_amount_check CHECK (amount IS NULL OR amount > 0),
    CONSTRAINT payments_charge_action_finished_check CHECK (
        status = 'pending' OR (response_status IS NOT NULL AND response_type IS NOT NULL AND response_body IS NOT NULL)),
    CONSTRAINT payments_charge_action_entry_check CHECK (status <> 'succeeded' OR ledger_entry_id IS NOT NULL)
);

CREATE UNIQUE INDEX payments_charge_action_one_idx ON payments_charge_action (charge_id)
    WHERE status IN ('pending', 'succeeded');
