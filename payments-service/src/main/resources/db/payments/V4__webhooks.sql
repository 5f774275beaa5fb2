-- Webhooks from a transactional outbox. An event is written by the business transaction that changes a
-- charge or a refund (same connection, same commit), together with one delivery row per endpoint of the
-- tenant that listens to its type; the delivery worker sends the deliveries afterwards, at least once.
-- (V3 is another change's number.)

-- The tenant's webhook endpoints. The signing secret is kept to sign every delivery; the API shows it
-- once, in the answer that created the endpoint.
CREATE TABLE payments_webhook_endpoint (
    id                   text        NOT NULL,
    tenant               text        NOT NULL,
    url                  text        NOT NULL,
    -- event types it receives, or {'*'} for every type
    enabled_events       text[]      NOT NULL,
    description          text        NULL,
    secret               text        NOT NULL,
    -- enabled -> disabled (DELETE); a disabled endpoint gets no new deliveries and its pending ones are canceled
    status               text        NOT NULL,
    created_at           timestamptz NOT NULL,
    disabled_at          timestamptz NULL,
    CONSTRAINT payments_webhook_endpoint_pkey PRIMARY KEY (id),
    CONSTRAINT payments_webhook_endpoint_status_check CHECK (status IN ('enabled', 'disabled')),
    CONSTRAINT payments_webhook_endpoint_events_check CHECK (cardinality(enabled_events) > 0)
);

-- fan-out at record time: the tenant's enabled endpoints
CREATE INDEX payments_webhook_endpoint_tenant_idx ON payments_webhook_endpoint (tenant, status);

-- The outbox: one row per event, immutable. seq orders the tenant's event list (keyset pages).
CREATE TABLE payments_event (
    seq                  bigint      GENERATED ALWAYS AS IDENTITY,
    id                   text        NOT NULL,
    tenant               text        NOT NULL,
    type                 text        NOT NULL,
    -- the charge or refund the event is about
    subject_id           text        NOT NULL,
    -- the exact JSON document every delivery of the event sends (the same bytes on every attempt)
    body                 text        NOT NULL,
    created_at           timestamptz NOT NULL,
    CONSTRAINT payments_event_pkey PRIMARY KEY (seq),
    CONSTRAINT payments_event_id UNIQUE (id)
);

CREATE INDEX payments_event_tenant_idx ON payments_event (tenant, seq);
CREATE INDEX payments_event_subject_idx ON payments_event (tenant, subject_id);

-- One row per (event, endpoint): the delivery's state and attempts.
CREATE TABLE payments_webhook_delivery (
    id                   bigint      GENERATED ALWAYS AS IDENTITY,
    event_id             text        NOT NULL,
    endpoint_id          text        NOT NULL,
    tenant               text        NOT NULL,
    -- pending -> delivered (a 2xx) | dead_lettered (max attempts) | canceled (endpoint disabled)
    status               text        NOT NULL,
    -- attempts started; counted when a worker claims the delivery, before it sends
    attempts             integer     NOT NULL DEFAULT 0,
    -- when the next attempt is due; while a worker holds the delivery, the end of its claim
    next_attempt_at      timestamptz NOT NULL,
    -- the claim of the worker sending the current attempt (fences its failure write), or NULL
    claim_token          text        NULL,
    last_status          integer     NULL,
    last_error           text        NULL,
    last_attempt_at      timestamptz NULL,
    delivered_at         timestamptz NULL,
    created_at           timestamptz NOT NULL,
    CONSTRAINT payments_webhook_delivery_pkey PRIMARY KEY (id),
    CONSTRAINT payments_webhook_delivery_once UNIQUE (event_id, endpoint_id),
    CONSTRAINT payments_webhook_delivery_event_fk FOREIGN KEY (event_id) REFERENCES payments_event (id),
    CONSTRAINT payments_webhook_delivery_endpoint_fk FOREIGN KEY (endpoint_id) REFERENCES payments_webhook_endpoint (id),
    CONSTRAINT payments_webhook_delivery_status_check
        CHECK (status IN ('pending', 'delivered', 'dead_lettered', 'canceled'))
);

-- the worker's claim: due pending deliveries, oldest due first
CREATE INDEX payments_webhook_delivery_due_idx ON payments_webhook_delivery (next_attempt_at) WHERE status = 'pending';
CREATE INDEX payments_webhook_delivery_event_idx ON payments_webhook_delivery (event_id);
CREATE INDEX payments_webhook_delivery_endpoint_idx ON payments_webhook_delivery (endpoint_id) WHERE status = 'pending';
