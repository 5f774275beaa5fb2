-- Exactly ledger, schema version 6: the postings' statement trigger looks each posting's entry and account
-- up by key.
--
-- Version 4's first question joined the new postings to ledger_entry and ledger_account. PL/pgSQL keeps the
-- plan of a query without parameters for the life of the connection, made from what the planner knew at the
-- first call: on a ledger whose accounts were opened after that call (a new deployment, or statistics not
-- refreshed since), the join could stay a hash join over a sequential scan of every account, repeated for each
-- entry (seen in the payment service's benchmark: 1,001 accounts read per charge, with autovacuum off). Here
-- each lookup is a scalar subquery, which PostgreSQL neither hashes nor turns into a join: a subplan run per
-- posting, a probe of the primary key unless the planner believes the table fits in a page or two (then a
-- scan of that page, and the next ANALYZE plans again). The same rules (every column they read is NOT NULL,
-- so a missing row's NULL fails the test as the join's IS NULL did), the same search for the first broken
-- rule, errors and SQLSTATEs.
-- Applied on top of V5; may run again (CREATE OR REPLACE). LedgerSchema.migrate: a schema whose
-- ledger_check_new_postings has no version 6 comment has not run it.

DO $migration$
BEGIN
    EXECUTE replace($definitions$
CREATE OR REPLACE FUNCTION @schema@.ledger_check_new_postings() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    bad record;
BEGIN
    -- the common case: no new posting breaks a rule (the same conditions as the search below; every column
    -- they read is NOT NULL, so a missing entry or account makes its scalar subquery NULL and the posting
    -- bad). Each posting's entry and account are probed by key: a scalar subquery is a subplan run per
    -- posting, never hashed nor turned into a join that reads every entry or account.
    IF NOT EXISTS (SELECT 1
                   FROM ledger_new_postings p
                   WHERE p.side NOT IN ('debit', 'credit') OR p.amount <= 0
                      OR (SELECT e.created_xact = pg_current_xact_id() AND e.posted_at = p.posted_at
                          FROM @schema@.ledger_entry e WHERE e.id = p.entry_id) IS NOT TRUE
                      OR (SELECT a.currency FROM @schema@.ledger_account a WHERE a.id = p.account_id)
                          IS DISTINCT FROM p.currency) THEN
        RETURN NULL;
    END IF;
    SELECT p.entry_id, p.account_id, p.currency, p.side, p.amount, a.currency AS account_currency,
           p.side NOT IN ('debit', 'credit') AS bad_side, p.amount <= 0 AS bad_amount,
           (e.id IS NULL OR e.created_xact <> pg_current_xact_id() OR e.posted_at <> p.posted_at) AS foreign_entry
    INTO bad
    FROM ledger_new_postings p
    LEFT JOIN @schema@.ledger_entry e ON e.id = p.entry_id
    LEFT JOIN @schema@.ledger_account a ON a.id = p.account_id
    WHERE p.side NOT IN ('debit', 'credit') OR p.amount <= 0
       OR e.id IS NULL OR e.created_xact <> pg_current_xact_id() OR e.posted_at <> p.posted_at
       OR a.id IS NULL OR a.currency <> p.currency
    ORDER BY (p.side NOT IN ('debit', 'credit') OR p.amount <= 0) DESC
    LIMIT 1;
    IF NOT FOUND THEN
        RETURN NULL;
    ELSIF bad.bad_amount THEN
        RAISE EXCEPTION 'new row for relation "ledger_posting" violates check constraint "ledger_posting_amount_check"'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_posting_amount_check', TABLE = 'ledger_posting',
                  DETAIL = format('entry %s, account %s, amount %s', bad.entry_id, bad.account_id, bad.amount);
    ELSIF bad.bad_side THEN
        RAISE EXCEPTION 'new row for relation "ledger_posting" violates check constraint "ledger_posting_side_check"'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_posting_side_check', TABLE = 'ledger_posting',
                  DETAIL = format('entry %s, account %s, side %s', bad.entry_id, bad.account_id, bad.side);
    ELSIF bad.foreign_entry THEN
        RAISE EXCEPTION 'ledger: postings may only be added, with the entry''s time, to an entry created in the same transaction (entry %)', bad.entry_id
            USING ERRCODE = 'LG001';
    ELSIF bad.account_currency IS NULL THEN
        RAISE EXCEPTION 'ledger: unknown account %', bad.account_id USING ERRCODE = 'LG002';
    ELSE
        RAISE EXCEPTION 'ledger: posting in % to account % held in %', bad.currency, bad.account_id, bad.account_currency
            USING ERRCODE = 'LG003';
    END IF;
END
$$
$definitions$, '@schema@', quote_ident(current_schema()));
END
$migration$;

COMMENT ON FUNCTION ledger_check_new_postings IS 'ledger schema version 6';
