-- Exactly ledger, schema version 5: the same functions, without a search_path of their own.
--
-- Versions 1 to 4 created the write function and the two rule triggers' functions with SET search_path FROM
-- CURRENT, so that they found the ledger's tables whatever the caller's search_path. PostgreSQL runs such a
-- function through fmgr_security_definer: every call opens a GUC nesting level, sets search_path, which
-- invalidates the cached namespace search path, recomputes it at the next name lookup, and restores it all
-- on the way out; a charge's entry makes three such calls (the write, the postings' statement trigger inside
-- it, the entry's deferred trigger at commit), about 40 thousand of a PostgreSQL 15 backend's instructions
-- (callgrind, a charge of the payment service). Here the same bodies (version 4's triggers, version 3's
-- write: the same rules, errors, SQLSTATEs, constraint names and lock order) name every ledger table with
-- the schema they are created in, written into the text when this migration runs, so they need no
-- search_path: functions and operators resolve in pg_catalog, which PostgreSQL searches first whatever the
-- caller's search_path. The transition table ledger_new_postings is the trigger's own name and needs no schema.
-- Applied on top of V4; may run again (CREATE OR REPLACE). LedgerSchema.migrate: a schema whose
-- ledger_write_entry has no version 5 comment has not run it.

DO $migration$
BEGIN
    EXECUTE replace($definitions$
CREATE OR REPLACE FUNCTION @schema@.ledger_check_new_postings() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    bad record;
BEGIN
    -- the common case: no new posting breaks a rule (the same conditions as the search below)
    IF NOT EXISTS (SELECT 1
                   FROM ledger_new_postings p
                   LEFT JOIN @schema@.ledger_entry e ON e.id = p.entry_id
                   LEFT JOIN @schema@.ledger_account a ON a.id = p.account_id
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
    EXECUTE replace($definitions$
CREATE OR REPLACE FUNCTION @schema@.ledger_check_entry_balanced() RETURNS trigger
    LANGUAGE plpgsql AS $$
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
    FROM @schema@.ledger_posting p
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
          FROM @schema@.ledger_posting p
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
        IF NOT EXISTS (SELECT 1 FROM @schema@.ledger_entry o WHERE o.id = NEW.original_id AND o.kind = 'pending') THEN
            RAISE EXCEPTION 'ledger: % entry % resolves entry %, which is not a pending entry', NEW.kind, NEW.id, NEW.original_id
                USING ERRCODE = 'LG007';
        END IF;
        -- the released amounts are exactly the held ones, on the opposite sides
        IF EXISTS ((SELECT p.account_id, p.currency, p.side, p.amount
                    FROM @schema@.ledger_posting p WHERE p.entry_id = NEW.id AND p.pending
                    EXCEPT ALL
                    SELECT h.account_id, h.currency, CASE h.side WHEN 'debit' THEN 'credit' ELSE 'debit' END, h.amount
                    FROM @schema@.ledger_posting h WHERE h.entry_id = NEW.original_id)
                   UNION ALL
                   (SELECT h.account_id, h.currency, CASE h.side WHEN 'debit' THEN 'credit' ELSE 'debit' END, h.amount
                    FROM @schema@.ledger_posting h WHERE h.entry_id = NEW.original_id
                    EXCEPT ALL
                    SELECT p.account_id, p.currency, p.side, p.amount
                    FROM @schema@.ledger_posting p WHERE p.entry_id = NEW.id AND p.pending)) THEN
            RAISE EXCEPTION 'ledger: % entry % does not release exactly what entry % holds', NEW.kind, NEW.id, NEW.original_id
                USING ERRCODE = 'LG007';
        END IF;
        -- what is captured was held, per account and side, and no more
        SELECT c.account_id, c.side INTO bad
        FROM (SELECT p.account_id, p.side, sum(p.amount::numeric) AS amount
              FROM @schema@.ledger_posting p WHERE p.entry_id = NEW.id AND NOT p.pending
              GROUP BY p.account_id, p.side) c
        LEFT JOIN (SELECT h.account_id, h.side, sum(h.amount::numeric) AS amount
                   FROM @schema@.ledger_posting h WHERE h.entry_id = NEW.original_id
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
$$
$definitions$, '@schema@', quote_ident(current_schema()));
    EXECUTE replace($definitions$
CREATE OR REPLACE FUNCTION @schema@.ledger_write_entry(
    p_kind text, p_original_id bigint, p_external_ref text, p_description text, p_posted_at timestamptz,
    p_accounts bigint[], p_currencies text[], p_sides text[], p_amounts bigint[], p_pending boolean[],
    p_single_accounts bigint[], p_single_changes bigint[], p_single_increases bigint[], p_single_decreases bigint[],
    p_sharded_accounts bigint[], p_sharded_changes bigint[], p_sharded_increases bigint[],
    p_sharded_decreases bigint[], p_sharded_counts integer[],
    OUT entry_id bigint, OUT refused bigint[])
    LANGUAGE plpgsql AS $$
DECLARE
    v_shard integer;
    v_preferred integer;
BEGIN
    IF p_kind IN ('capture', 'void') THEN
        PERFORM 1 FROM @schema@.ledger_open_hold h WHERE h.entry_id = p_original_id FOR UPDATE;
    END IF;

    INSERT INTO @schema@.ledger_entry (kind, original_id, external_ref, description, posted_at)
    VALUES (p_kind, p_original_id, p_external_ref, p_description, p_posted_at)
    ON CONFLICT DO NOTHING
    RETURNING id INTO entry_id;
    IF entry_id IS NULL THEN
        RETURN;
    END IF;

    INSERT INTO @schema@.ledger_posting (entry_id, line, account_id, currency, side, amount, posted_at, pending)
    SELECT entry_id, l.n, l.account_id, l.currency, l.side, l.amount, p_posted_at, l.pending
    FROM unnest(p_accounts, p_currencies, p_sides, p_amounts, p_pending) WITH ORDINALITY
        AS l (account_id, currency, side, amount, pending, n);

    IF p_kind = 'pending' THEN
        INSERT INTO @schema@.ledger_open_hold (entry_id, posted_at) VALUES (entry_id, p_posted_at);
    ELSIF p_kind IN ('capture', 'void') THEN
        DELETE FROM @schema@.ledger_open_hold h WHERE h.entry_id = p_original_id;
    END IF;

    FOR i IN 1 .. coalesce(array_length(p_single_accounts, 1), 0) LOOP
        IF i > 1 AND p_single_accounts[i] <= p_single_accounts[i - 1] THEN
            RAISE EXCEPTION 'ledger: unsharded accounts must be given in ascending order' USING ERRCODE = 'LG008';
        END IF;
        UPDATE @schema@.ledger_balance b
        SET balance = b.balance + p_single_changes[i],
            pending_increase = b.pending_increase + p_single_increases[i],
            pending_decrease = b.pending_decrease + p_single_decreases[i]
        WHERE b.account_id = p_single_accounts[i] AND b.shard = 0
          AND (b.floor_minor IS NULL OR p_single_changes[i] - p_single_decreases[i] >= 0
               OR b.balance + p_single_changes[i] - (b.pending_decrease + p_single_decreases[i]) >= b.floor_minor);
        IF NOT FOUND THEN
            refused := refused || p_single_accounts[i];
        END IF;
    END LOOP;
    IF refused IS NOT NULL THEN
        RETURN;
    END IF;

    FOR i IN 1 .. coalesce(array_length(p_sharded_accounts, 1), 0) LOOP
        v_preferred := (entry_id % p_sharded_counts[i])::integer;
        WITH free AS (
            SELECT b.account_id, b.shard
            FROM @schema@.ledger_balance b
            WHERE b.account_id = p_sharded_accounts[i] AND b.shard = v_preferred
            FOR UPDATE SKIP LOCKED
        )
        UPDATE @schema@.ledger_balance b
        SET balance = b.balance + p_sharded_changes[i],
            pending_increase = b.pending_increase + p_sharded_increases[i],
            pending_decrease = b.pending_decrease + p_sharded_decreases[i]
        FROM free
        WHERE b.account_id = free.account_id AND b.shard = free.shard
        RETURNING b.shard INTO v_shard;
        IF NOT FOUND THEN
            WITH free AS (
                SELECT b.account_id, b.shard
                FROM @schema@.ledger_balance b
                WHERE b.account_id = p_sharded_accounts[i]
                ORDER BY (b.shard + p_sharded_counts[i] - v_preferred) % p_sharded_counts[i]
                LIMIT 1
                FOR UPDATE SKIP LOCKED
            )
            UPDATE @schema@.ledger_balance b
            SET balance = b.balance + p_sharded_changes[i],
                pending_increase = b.pending_increase + p_sharded_increases[i],
                pending_decrease = b.pending_decrease + p_sharded_decreases[i]
            FROM free
            WHERE b.account_id = free.account_id AND b.shard = free.shard
            RETURNING b.shard INTO v_shard;
            IF NOT FOUND THEN
                UPDATE @schema@.ledger_balance b
                SET balance = b.balance + p_sharded_changes[i],
                    pending_increase = b.pending_increase + p_sharded_increases[i],
                    pending_decrease = b.pending_decrease + p_sharded_decreases[i]
                WHERE b.account_id = p_sharded_accounts[i] AND b.shard = v_preferred
                RETURNING b.shard INTO v_shard;
                IF NOT FOUND THEN
                    RAISE EXCEPTION 'ledger: account % has no balance row %', p_sharded_accounts[i], v_preferred
                        USING ERRCODE = 'LG006';
                END IF;
            END IF;
        END IF;
    END LOOP;
END
$$
$definitions$, '@schema@', quote_ident(current_schema()));
END
$migration$;

COMMENT ON FUNCTION ledger_write_entry IS 'ledger schema version 5';
