-- The row rules of a charge, checked by a constraint trigger instead of CHECK constraints. PostgreSQL
-- parses the expression of every CHECK constraint of a table again in every statement that inserts or
-- updates it (ExecRelCheck reads each stored expression from its text form and plans it per statement,
-- without a cache): a charge's insert and its update in phase 3 parsed about 14 KB of expression text,
-- about a sixth of the database's instructions per charge. The trigger function checks the same seven
-- conditions, row by row, for every INSERT and UPDATE, after every BEFORE trigger (it sees the row as
-- stored), and refuses a row that breaks one as the CHECK did: SQLSTATE 23514 (check_violation), the
-- constraint's name and the same message. As with a CHECK, a condition that is NULL passes.

ALTER TABLE payments_charge
    DROP CONSTRAINT payments_charge_amount_check,
    DROP CONSTRAINT payments_charge_refund_check,
    DROP CONSTRAINT payments_charge_status_check,
    DROP CONSTRAINT payments_charge_finished_check,
    DROP CONSTRAINT payments_charge_entry_check,
    DROP CONSTRAINT payments_charge_hold_check,
    DROP CONSTRAINT payments_charge_captured_check;

CREATE FUNCTION payments_charge_check_row() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    broken text;
BEGIN
    -- in the order PostgreSQL checked the constraints (by name)
    IF NOT (NEW.amount > 0) THEN
        broken := 'payments_charge_amount_check';
    ELSIF NOT (NEW.amount_captured IS NULL OR (NEW.amount_captured > 0 AND NEW.amount_captured <= NEW.amount
                                               AND NEW.amount_refunded <= NEW.amount_captured)) THEN
        broken := 'payments_charge_captured_check';
    ELSIF NOT (NEW.status <> 'succeeded' OR NEW.ledger_entry_id IS NOT NULL) THEN
        broken := 'payments_charge_entry_check';
    ELSIF NOT (NEW.status IN ('pending', 'dead_lettered')
               OR (NEW.response_status IS NOT NULL AND NEW.response_type IS NOT NULL
                   AND NEW.response_body IS NOT NULL)) THEN
        broken := 'payments_charge_finished_check';
    ELSIF NOT (NEW.status NOT IN ('authorized', 'voided') OR NEW.hold_entry_id IS NOT NULL) THEN
        broken := 'payments_charge_hold_check';
    ELSIF NOT (NEW.amount_refunded >= 0 AND NEW.amount_refunded <= NEW.amount) THEN
        broken := 'payments_charge_refund_check';
    ELSIF NOT (NEW.status IN ('pending', 'succeeded', 'failed', 'dead_lettered', 'authorized', 'voided')) THEN
        broken := 'payments_charge_status_check';
    ELSE
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'new row for relation "%" violates check constraint "%"', TG_TABLE_NAME, broken
        USING ERRCODE = 'check_violation', CONSTRAINT = broken, TABLE = TG_TABLE_NAME, SCHEMA = TG_TABLE_SCHEMA,
              DETAIL = format('charge %s, status %s', NEW.id, NEW.status);
END
$$;

CREATE CONSTRAINT TRIGGER payments_charge_rules AFTER INSERT OR UPDATE ON payments_charge
    NOT DEFERRABLE
    FOR EACH ROW EXECUTE FUNCTION payments_charge_check_row();
