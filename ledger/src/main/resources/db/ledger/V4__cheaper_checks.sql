-- Exactly ledger, schema version 4: the same rules, checked with less work when they hold.
--
-- Both rule triggers first ask one cheap question whose answer is "every rule holds" in the common case, and
-- only otherwise run version 3's checks, unchanged, which find the broken rule and raise exactly as before
-- (the same SQLSTATEs, constraint names, messages and order). Counted with callgrind on a PostgreSQL 15 backend
-- running a charge of the payment service (its entry: two postings, one currency), the two triggers took
-- about 210 and 200 thousand instructions per entry before, about 65 and 45 thousand fewer now:
--   * ledger_check_new_postings (the statement trigger on postings): one EXISTS over the new postings with the
--     rows' conditions; version 3 sorted the broken rows first to pick the one to report, for every insert;
--   * ledger_check_entry_balanced (the deferred trigger of every new entry): the entry's row rules and its
--     postings' count, held count and balance in one aggregate over its postings when they are all in one
--     currency and all held or all posted (one balance group), with bigint sums; version 3 grouped the
--     postings by currency and pending with numeric sums and an ordered string_agg for the message, and
--     evaluated each rule in a statement of its own. Entries of several groups (a capture releases held
--     amounts and posts others) and every entry a rule refuses go through version 3's checks.
-- Applied on top of V3; may run again (CREATE OR REPLACE). LedgerSchema.migrate: a schema whose
-- ledger_check_entry_balanced has no version 4 comment has not run it.

CREATE OR REPLACE FUNCTION ledger_check_new_postings() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    bad record;
BEGIN
    -- the common case: no new posting breaks a rule (the same conditions as the search below)
    IF NOT EXISTS (SELECT 1
                   FROM ledger_new_postings p
                   LEFT JOIN ledger_entry e ON e.id = p.entry_id
                   LEFT JOIN ledger_account a ON a.id = p.account_id
                   WHERE p.side NOT IN ('debit', 'credit') OR p.amount <= 0
                      OR e.id IS NULL OR e.created_xact <> pg_current_xact_id() OR e.posted_at <> p.posted_at
                      OR a.id IS NULL OR a.currency <> p.currency) THEN
        RETURN NULL;
    END IF;
    SELECT p.entry_id, p.account_id, p.currency, p.side, p.amount, a.currency AS account_currency,
           p.side NOT IN ('debit', 'credit') AS bad_side, p.amount <= 0 AS bad_amount,
           (e.id IS NULL OR e.created_xact <> pg_current_xact_id() OR e.posted_at <> p.posted_at) AS foreign_entry
    INTO bad
    FROM ledger_new_postings p
    LEFT JOIN ledger_entry e ON e.id = p.entry_id
    LEFT JOIN ledger_account a ON a.id = p.account_id
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
$$;

CREATE OR REPLACE FUNCTION ledger_check_entry_balanced() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    postings   bigint;
    held       bigint;
    unbalanced text;
    bad        record;
    holds      boolean;
BEGIN
    -- the common case: every rule holds for an entry whose postings form one balance group (one currency,
    -- all held or all posted). Amounts are positive (the postings' trigger), so the bigint sum is exact.
    -- A NULL (no postings) is not true: version 3's checks below decide.
    SELECT count(*) >= 2
           AND min(p.currency) = max(p.currency) AND bool_and(p.pending) = bool_or(p.pending)
           AND sum(CASE p.side WHEN 'debit' THEN p.amount ELSE -p.amount END) = 0
           AND (length(NEW.external_ref) NOT BETWEEN 1 AND 255) IS NOT TRUE
           AND (length(NEW.description) > 1000) IS NOT TRUE
           AND CASE NEW.kind
                   WHEN 'standard' THEN NEW.original_id IS NULL AND NOT bool_or(p.pending)
                   WHEN 'adjustment' THEN NOT bool_or(p.pending)
                   WHEN 'reversal' THEN NEW.original_id IS NOT NULL AND NOT bool_or(p.pending)
                   WHEN 'refund' THEN NEW.original_id IS NOT NULL AND NOT bool_or(p.pending)
                   WHEN 'pending' THEN NEW.original_id IS NULL AND bool_and(p.pending)
                   ELSE false
               END
    INTO holds
    FROM ledger_posting p
    WHERE p.entry_id = NEW.id;
    IF holds THEN
        RETURN NULL;
    END IF;
    -- the entry's row rules (CHECK constraints before version 3), under their names
    IF NEW.kind NOT IN ('standard', 'reversal', 'refund', 'adjustment', 'pending', 'capture', 'void') THEN
        RAISE EXCEPTION 'new row for relation "ledger_entry" violates check constraint "ledger_entry_kind_check"'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_entry_kind_check', TABLE = 'ledger_entry',
                  DETAIL = format('entry %s, kind %s', NEW.id, NEW.kind);
    END IF;
    IF NOT ((NEW.kind IN ('standard', 'pending') AND NEW.original_id IS NULL)
            OR (NEW.kind IN ('reversal', 'refund', 'capture', 'void') AND NEW.original_id IS NOT NULL)
            OR NEW.kind = 'adjustment') THEN
        RAISE EXCEPTION 'new row for relation "ledger_entry" violates check constraint "ledger_entry_link_check"'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_entry_link_check', TABLE = 'ledger_entry',
                  DETAIL = format('entry %s, kind %s, original entry %s', NEW.id, NEW.kind, NEW.original_id);
    END IF;
    IF length(NEW.external_ref) NOT BETWEEN 1 AND 255 THEN
        RAISE EXCEPTION 'new row for relation "ledger_entry" violates check constraint "ledger_entry_external_ref_check"'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_entry_external_ref_check', TABLE = 'ledger_entry',
                  DETAIL = format('entry %s, reference of %s characters', NEW.id, length(NEW.external_ref));
    END IF;
    IF length(NEW.description) > 1000 THEN
        RAISE EXCEPTION 'new row for relation "ledger_entry" violates check constraint "ledger_entry_description_check"'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_entry_description_check', TABLE = 'ledger_entry',
                  DETAIL = format('entry %s, description of %s characters', NEW.id, length(NEW.description));
    END IF;
    SELECT coalesce(sum(g.n), 0), coalesce(sum(g.n) FILTER (WHERE g.pending), 0),
           string_agg(CASE WHEN g.pending THEN 'pending ' ELSE '' END || g.currency, ', '
                      ORDER BY g.currency, g.pending) FILTER (WHERE g.net <> 0)
    INTO postings, held, unbalanced
    FROM (SELECT p.currency, p.pending, count(*) AS n,
                 sum(CASE p.side WHEN 'debit' THEN p.amount::numeric ELSE -p.amount::numeric END) AS net
          FROM ledger_posting p
          WHERE p.entry_id = NEW.id
          GROUP BY p.currency, p.pending) g;
    IF postings < 2 THEN
        RAISE EXCEPTION 'ledger: entry % has % posting(s); at least 2 are required', NEW.id, postings
            USING ERRCODE = 'LG004';
    END IF;
    IF unbalanced IS NOT NULL THEN
        RAISE EXCEPTION 'ledger: entry % does not balance in %', NEW.id, unbalanced
            USING ERRCODE = 'LG005';
    END IF;
    IF (NEW.kind IN ('pending', 'void') AND held <> postings)
       OR (NEW.kind = 'capture' AND (held = 0 OR held = postings))
       OR (NEW.kind NOT IN ('pending', 'capture', 'void') AND held <> 0) THEN
        RAISE EXCEPTION 'ledger: a % entry (%) can''t have % pending posting(s) of %', NEW.kind, NEW.id, held, postings
            USING ERRCODE = 'LG007';
    END IF;
    IF NEW.kind IN ('capture', 'void') THEN
        IF NOT EXISTS (SELECT 1 FROM ledger_entry o WHERE o.id = NEW.original_id AND o.kind = 'pending') THEN
            RAISE EXCEPTION 'ledger: % entry % resolves entry %, which is not a pending entry', NEW.kind, NEW.id, NEW.original_id
                USING ERRCODE = 'LG007';
        END IF;
        -- the released amounts are exactly the held ones, on the opposite sides
        IF EXISTS ((SELECT p.account_id, p.currency, p.side, p.amount
                    FROM ledger_posting p WHERE p.entry_id = NEW.id AND p.pending
                    EXCEPT ALL
                    SELECT h.account_id, h.currency, CASE h.side WHEN 'debit' THEN 'credit' ELSE 'debit' END, h.amount
                    FROM ledger_posting h WHERE h.entry_id = NEW.original_id)
                   UNION ALL
                   (SELECT h.account_id, h.currency, CASE h.side WHEN 'debit' THEN 'credit' ELSE 'debit' END, h.amount
                    FROM ledger_posting h WHERE h.entry_id = NEW.original_id
                    EXCEPT ALL
                    SELECT p.account_id, p.currency, p.side, p.amount
                    FROM ledger_posting p WHERE p.entry_id = NEW.id AND p.pending)) THEN
            RAISE EXCEPTION 'ledger: % entry % does not release exactly what entry % holds', NEW.kind, NEW.id, NEW.original_id
                USING ERRCODE = 'LG007';
        END IF;
        -- what is captured was held, per account and side, and no more
        SELECT c.account_id, c.side INTO bad
        FROM (SELECT p.account_id, p.side, sum(p.amount::numeric) AS amount
              FROM ledger_posting p WHERE p.entry_id = NEW.id AND NOT p.pending
              GROUP BY p.account_id, p.side) c
        LEFT JOIN (SELECT h.account_id, h.side, sum(h.amount::numeric) AS amount
                   FROM ledger_posting h WHERE h.entry_id = NEW.original_id
                   GROUP BY h.account_id, h.side) h ON h.account_id = c.account_id AND h.side = c.side
        WHERE h.amount IS NULL OR c.amount > h.amount
        LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'ledger: capture % posts more to account % (%) than entry % holds', NEW.id, bad.account_id, bad.side, NEW.original_id
                USING ERRCODE = 'LG007';
        END IF;
    END IF;
    RETURN NULL;
END
$$;

COMMENT ON FUNCTION ledger_check_entry_balanced() IS 'ledger schema version 4';
