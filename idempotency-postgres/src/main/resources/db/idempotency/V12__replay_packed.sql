-- A finished record's replay in one column (dev.exactly:idempotency-postgres). A replay reads a finished record
-- by its key; PostgreSQL sets up every output column and every condition of a statement again in each execution
-- (a row type entry, a projection step, an output function per column), so that the nine columns and two
-- conditions of the record cost it more than the read itself: counted under callgrind (PostgreSQL 15, 600,000
-- records, binary results as the JDBC driver asks for them), about 71,900 instructions per replay against
-- 52,400 for a one-column read by primary key. The row trigger now keeps, for every finished record, its
-- fields but the body in the column replay, which the store's read of a finished record returns with the
-- body alone (about 57,800):
--
--   one byte, the format's version (1);
--   created_at and expires_at, as timestamptz_send writes them (eight bytes each: microseconds since
--     2000-01-01 00:00 UTC, big-endian);
--   response_status, as int4send writes it;
--   the array {status, fingerprint, owner_token, name1, value1, name2, value2, ...}, as array_send writes a
--     text[] (the headers as response_headers keeps them; owner_token may be null).
--
-- array_send writes text in the session's client encoding: the trigger writes replay only from a UTF8
-- session (the store's JDBC sessions always are) and null from any other, and the store then reads the
-- record's columns, as it does for null (a record still in flight, or finished before this migration).
-- The trigger also fires for updates of fingerprint, created_at and replay itself, so that replay cannot
-- disagree with the record. The rule, its error and recovery_due are V11's. Applied on top of V11; may run
-- again.
ALTER TABLE idempotency_records ADD COLUMN IF NOT EXISTS replay bytea NULL;

CREATE OR REPLACE FUNCTION idempotency_records_row_rules() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    IF NEW.status = 'PROCESSING' THEN
        IF NEW.owner_token IS NOT NULL AND NEW.lease_expires_at IS NOT NULL THEN
            IF NEW.expires_at = 'infinity' AND NEW.dead_lettered_at IS NULL THEN
                NEW.recovery_due := NEW.lease_expires_at;
            ELSIF NEW.recovery_due IS NOT NULL THEN
                NEW.recovery_due := NULL;
            END IF;
            IF NEW.replay IS NOT NULL THEN
                NEW.replay := NULL;
            END IF;
            RETURN NEW;
        END IF;
    ELSIF NEW.status IN ('COMPLETED', 'FAILED') AND NEW.response_status IS NOT NULL
            AND NEW.response_headers IS NOT NULL AND NEW.response_body IS NOT NULL THEN
        IF NEW.recovery_due IS NOT NULL THEN
            NEW.recovery_due := NULL;
        END IF;
        NEW.replay := CASE WHEN pg_client_encoding() = 'UTF8' THEN
            '\x01'::bytea || timestamptz_send(NEW.created_at) || timestamptz_send(NEW.expires_at)
                || int4send(NEW.response_status)
                || array_send(ARRAY[NEW.status, NEW.fingerprint, NEW.owner_token] || NEW.response_headers)
            END;
        RETURN NEW;
    ELSIF NEW.status IS NULL THEN
        RETURN NEW; -- the column's NOT NULL refuses it, with its own SQLSTATE (23502), as before
    END IF;
    RAISE EXCEPTION 'new row for relation "%" violates check constraint "%"', TG_TABLE_NAME,
            TG_TABLE_NAME || '_status_check'
        USING ERRCODE = 'check_violation', SCHEMA = TG_TABLE_SCHEMA, TABLE = TG_TABLE_NAME,
              CONSTRAINT = TG_TABLE_NAME || '_status_check',
              DETAIL = 'A processing record needs an owner token and a lease; a finished one (COMPLETED or '
                  || 'FAILED) its response status, headers and body. Status: ' || coalesce(NEW.status, 'null') || '.';
END
$$;

COMMENT ON FUNCTION idempotency_records_row_rules() IS
    'The row rule, recovery_due and replay of idempotency_records (dev.exactly:idempotency-postgres, migration V12)';

DROP TRIGGER IF EXISTS idempotency_records_row_rules ON idempotency_records;
CREATE TRIGGER idempotency_records_row_rules
    BEFORE INSERT OR UPDATE OF status, owner_token, lease_expires_at, expires_at, dead_lettered_at,
        response_status, response_headers, response_body, recovery_due, fingerprint, created_at, replay
    ON idempotency_records
    FOR EACH ROW EXECUTE FUNCTION idempotency_records_row_rules();
