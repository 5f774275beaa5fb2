-- Refunds go through the processor in atomic phases, like charges. Phase 1 inserts the refund row
-- 'pending' with its downstream key and the exact processor request (its amount stays reserved on the
-- charge while the row is pending or dead-lettered); phase 3 finishes it 'succeeded' (journaled) or
-- 'failed' (the processor refused it), with its recorded answer. 'refused' stays for refunds the service
-- refused itself (no such charge, not refundable, too much), which never reach the processor. Rows written
-- before this version (succeeded or refused, without a downstream key) keep their answers and are read
-- as before.

ALTER TABLE payments_refund
    -- the processor's Idempotency-Key, derived from the refund id; NULL for refunds that never reach it
    ADD COLUMN downstream_key      text        NULL,
    -- the exact request sent to the processor (JSON), persisted before the first send
    ADD COLUMN processor_request   text        NULL,
    ADD COLUMN processor_refund_id text        NULL,
    -- refund_created -> processor_called (an attempt's outcome was unknown) -> finished
    ADD COLUMN recovery_point      text        NOT NULL DEFAULT 'finished',
    ADD COLUMN attempts            integer     NOT NULL DEFAULT 0,
    ADD COLUMN last_error          text        NULL,
    ADD COLUMN dead_letter_reason  text        NULL,
    ADD COLUMN updated_at          timestamptz NULL,
    ADD COLUMN finished_at         timestamptz NULL,
    ALTER COLUMN response_status DROP NOT NULL,
    ALTER COLUMN response_type DROP NOT NULL,
    ALTER COLUMN response_body DROP NOT NULL,
    DROP CONSTRAINT payments_refund_status_check,
    ADD CONSTRAINT payments_refund_status_check
        CHECK (status IN ('pending', 'succeeded', 'failed', 'refused', 'dead_lettered')),
    ADD CONSTRAINT payments_refund_downstream_key UNIQUE (downstream_key),
    ADD CONSTRAINT payments_refund_open_check CHECK (
        status NOT IN ('pending', 'dead_lettered') OR (downstream_key IS NOT NULL AND processor_request IS NOT NULL)),
    ADD CONSTRAINT payments_refund_finished_check CHECK (
        status IN ('pending', 'dead_lettered')
        OR (response_status IS NOT NULL AND response_type IS NOT NULL AND response_body IS NOT NULL));

UPDATE payments_refund SET updated_at = created_at, finished_at = created_at;

ALTER TABLE payments_refund ALTER COLUMN updated_at SET NOT NULL;

-- the amount reserved on a charge by its open refunds, summed under the charge's row lock
CREATE INDEX payments_refund_open_idx ON payments_refund (charge_id) WHERE status IN ('pending', 'dead_lettered');
