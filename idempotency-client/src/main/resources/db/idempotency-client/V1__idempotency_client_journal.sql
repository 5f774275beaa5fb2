-- The key journal of dev.exactly.idempotency.client.intent.JdbcKeyJournal (PostgreSQL).
-- One row per intent in progress: its idempotency key and the exact request, written before the first
-- byte is sent; finished_at and final_status once a final answer came. Rows finished longer ago than
-- the client's retention are deleted by the client. Credentials are never stored.
-- The table name is unqualified: it lands in the first schema of the search_path.
CREATE TABLE IF NOT EXISTS idempotency_client_journal (
    namespace       text        NOT NULL,
    intent_id       text        NOT NULL,
    idempotency_key text        NOT NULL CHECK (length(idempotency_key) BETWEEN 1 AND 255),
    method          text        NOT NULL,
    targets         text        NOT NULL,   -- one URI per line, attempt order
    headers         text        NOT NULL,   -- "name: value" per line, credentials removed
    body            bytea       NOT NULL,   -- the exact bytes every attempt sends
    created_at      timestamptz NOT NULL,
    finished_at     timestamptz,
    final_status    integer,
    PRIMARY KEY (namespace, intent_id),
    CHECK ((finished_at IS NULL) = (final_status IS NULL))
);

CREATE INDEX IF NOT EXISTS idempotency_client_journal_finished
    ON idempotency_client_journal (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS idempotency_client_journal_pending
    ON idempotency_client_journal (created_at) WHERE finished_at IS NULL;
