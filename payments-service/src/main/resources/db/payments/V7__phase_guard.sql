-- A guard for statements sent with their commit in one round trip (db.Pipeline: several statements in one
-- prepared statement, one Sync). payments_require raises (SQLSTATE EXP01) when a condition that the commit
-- depends on does not hold: the server then skips the COMMIT after it and the transaction rolls back, and
-- the service runs the step again with the commit apart, reading the statements' results first. Returns
-- true otherwise. Applied on top of V6; may run again.
CREATE OR REPLACE FUNCTION payments_require(p_ok boolean, p_message text) RETURNS boolean
    LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    IF p_ok IS NOT TRUE THEN
        RAISE EXCEPTION '%', p_message USING ERRCODE = 'EXP01';
    END IF;
    RETURN true;
END
$$;
