-- Exactly ledger, schema version 1.
--
-- Table and function names are unqualified, so everything is created in the first schema of the
-- connection's search_path (Flyway sets it to its configured schema). Trigger functions capture that
-- search_path when they are created (SET search_path FROM CURRENT), so they keep working for
-- connections whose search_path differs.
--
-- Guards that hold even for a writer that bypasses the Java API:
--   * every entry has >= 2 postings and balances per currency at commit (deferred constraint trigger);
--   * postings can only be added to an entry created in the same transaction, name an existing
--     account, carry that account's currency and the entry's time (statement trigger);
--   * entries, postings and accounts are immutable, balance rows can't be deleted or re-keyed;
--   * a balance row never goes below its account's floor (CHECK).
-- Custom SQLSTATEs (class LG) let the Java API translate these into typed exceptions.
-- The Java API writes an entry in one round trip through ledger_post_entry (below), which also takes
-- the balance-row locks in a fixed order.

CREATE TABLE ledger_account (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    code           text        NOT NULL,
    type           text        NOT NULL,
    normal_balance text        NOT NULL,
    currency       text        NOT NULL,
    floor_minor    bigint,
    shards         integer     NOT NULL DEFAULT 1,
    created_at     timestamptz NOT NULL,
    CONSTRAINT ledger_account_code_key UNIQUE (code),
    CONSTRAINT ledger_account_code_check CHECK (length(code) BETWEEN 1 AND 200),
    CONSTRAINT ledger_account_type_check
        CHECK (type IN ('asset', 'liability', 'revenue', 'expense', 'equity')),
    CONSTRAINT ledger_account_normal_balance_check CHECK (normal_balance IN ('debit', 'credit')),
    CONSTRAINT ledger_account_currency_check CHECK (currency ~ '^[A-Z]{3}$'),
    CONSTRAINT ledger_account_shards_check CHECK (shards BETWEEN 1 AND 1024),
    -- a floor is a lower bound on the normal-side balance; only unsharded accounts may have one
    CONSTRAINT ledger_account_floor_check CHECK (floor_minor IS NULL OR (floor_minor <= 0 AND shards = 1))
);

-- The current balance of an account, split over `shards` rows (0 .. shards-1). The balance is signed
-- and on the account's normal side. A sharded (hot) account takes each entry on one shard, so
-- concurrent entries lock different rows; its balance is the sum of its shards.
CREATE TABLE ledger_balance (
    account_id  bigint  NOT NULL REFERENCES ledger_account (id),
    shard       integer NOT NULL,
    balance     bigint  NOT NULL DEFAULT 0,
    floor_minor bigint,
    CONSTRAINT ledger_balance_pkey PRIMARY KEY (account_id, shard),
    CONSTRAINT ledger_balance_floor_check CHECK (floor_minor IS NULL OR balance >= floor_minor)
) WITH (fillfactor = 50);

CREATE TABLE ledger_entry (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind         text        NOT NULL,
    original_id  bigint      REFERENCES ledger_entry (id),
    external_ref text,
    description  text        NOT NULL DEFAULT '',
    posted_at    timestamptz NOT NULL,
    created_xact xid8        NOT NULL DEFAULT pg_current_xact_id(),
    CONSTRAINT ledger_entry_external_ref_key UNIQUE (external_ref),
    CONSTRAINT ledger_entry_external_ref_check CHECK (length(external_ref) BETWEEN 1 AND 255),
    CONSTRAINT ledger_entry_description_check CHECK (length(description) <= 1000),
    CONSTRAINT ledger_entry_kind_check CHECK (kind IN ('standard', 'reversal', 'refund', 'adjustment')),
    CONSTRAINT ledger_entry_link_check CHECK (
        (kind = 'standard' AND original_id IS NULL)
        OR (kind IN ('reversal', 'refund') AND original_id IS NOT NULL)
        OR kind = 'adjustment')
);

-- an entry is reversed at most once, even by two racing writers
CREATE UNIQUE INDEX ledger_entry_one_reversal ON ledger_entry (original_id) WHERE kind = 'reversal';
CREATE INDEX ledger_entry_original ON ledger_entry (original_id) WHERE original_id IS NOT NULL;

-- No foreign key to ledger_account on purpose: a foreign-key check takes FOR KEY SHARE on the parent
-- row, so every charge would lock the clearing account's row (a MultiXact per concurrent charge).
-- The statement trigger below checks the account and its currency without taking a lock; accounts
-- can't be deleted.
CREATE TABLE ledger_posting (
    entry_id   bigint      NOT NULL,
    line       smallint    NOT NULL,
    account_id bigint      NOT NULL,
    currency   text        NOT NULL,
    side       text        NOT NULL,
    amount     bigint      NOT NULL,
    posted_at  timestamptz NOT NULL,
    CONSTRAINT ledger_posting_pkey PRIMARY KEY (entry_id, line),
    CONSTRAINT ledger_posting_side_check CHECK (side IN ('debit', 'credit')),
    CONSTRAINT ledger_posting_amount_check CHECK (amount > 0)
);

-- point-in-time balance of one account
CREATE INDEX ledger_posting_account_time ON ledger_posting (account_id, posted_at) INCLUDE (side, amount);
-- entries of one account, keyset-paged by entry id
CREATE INDEX ledger_posting_account_entry ON ledger_posting (account_id, entry_id);

CREATE FUNCTION ledger_check_new_postings() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    bad record;
BEGIN
    SELECT p.entry_id, p.account_id, p.currency, a.currency AS account_currency,
           (e.id IS NULL OR e.created_xact <> pg_current_xact_id() OR e.posted_at <> p.posted_at) AS foreign_entry
    INTO bad
    FROM ledger_new_postings p
    LEFT JOIN ledger_entry e ON e.id = p.entry_id
    LEFT JOIN ledger_account a ON a.id = p.account_id
    WHERE e.id IS NULL OR e.created_xact <> pg_current_xact_id() OR e.posted_at <> p.posted_at
       OR a.id IS NULL OR a.currency <> p.currency
    LIMIT 1;
    IF NOT FOUND THEN
        RETURN NULL;
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

CREATE TRIGGER ledger_posting_checked AFTER INSERT ON ledger_posting
    REFERENCING NEW TABLE AS ledger_new_postings
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_check_new_postings();

-- Runs when the transaction that created the entry commits (or at SET CONSTRAINTS ... IMMEDIATE).
CREATE FUNCTION ledger_check_entry_balanced() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    postings   bigint;
    unbalanced text;
BEGIN
    SELECT coalesce(sum(g.n), 0), string_agg(g.currency, ', ' ORDER BY g.currency) FILTER (WHERE g.net <> 0)
    INTO postings, unbalanced
    FROM (SELECT p.currency, count(*) AS n,
                 sum(CASE p.side WHEN 'debit' THEN p.amount::numeric ELSE -p.amount::numeric END) AS net
          FROM ledger_posting p
          WHERE p.entry_id = NEW.id
          GROUP BY p.currency) g;
    IF postings < 2 THEN
        RAISE EXCEPTION 'ledger: entry % has % posting(s); at least 2 are required', NEW.id, postings
            USING ERRCODE = 'LG004';
    END IF;
    IF unbalanced IS NOT NULL THEN
        RAISE EXCEPTION 'ledger: entry % does not balance in %', NEW.id, unbalanced
            USING ERRCODE = 'LG005';
    END IF;
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER ledger_entry_balanced AFTER INSERT ON ledger_entry
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION ledger_check_entry_balanced();

-- Writes one entry in one round trip, inside the caller's transaction (the Java API validates first):
--   1. the entry and its postings (a unique conflict - external reference, second reversal - inserts
--      nothing and returns entry_id NULL);
--   2. the balance rows of unsharded accounts, locked in ascending account id order (LockRows runs
--      above the sort) and changed unless the floor would be crossed: such accounts come back in
--      `refused` (locked, not changed) and nothing more is done; the caller must roll back;
--   3. for each sharded account, in ascending id order, the first shard no other transaction holds,
--      starting from entry id mod shards (SKIP LOCKED); only if all are held, wait for that one.
-- A transaction waits for a shard only while holding no shard of that account or a later one, and a
-- shard holder waits for nothing but later shards, so the waits can't form a cycle.
CREATE FUNCTION ledger_post_entry(
    p_kind text, p_original_id bigint, p_external_ref text, p_description text, p_posted_at timestamptz,
    p_accounts bigint[], p_currencies text[], p_sides text[], p_amounts bigint[],
    p_single_accounts bigint[], p_single_changes bigint[],
    p_sharded_accounts bigint[], p_sharded_changes bigint[], p_sharded_counts integer[],
    OUT entry_id bigint, OUT refused bigint[])
    LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    v_shard integer;
    v_preferred integer;
BEGIN
    INSERT INTO ledger_entry (kind, original_id, external_ref, description, posted_at)
    VALUES (p_kind, p_original_id, p_external_ref, p_description, p_posted_at)
    ON CONFLICT DO NOTHING
    RETURNING id INTO entry_id;
    IF entry_id IS NULL THEN
        RETURN;
    END IF;

    INSERT INTO ledger_posting (entry_id, line, account_id, currency, side, amount, posted_at)
    SELECT entry_id, l.n, l.account_id, l.currency, l.side, l.amount, p_posted_at
    FROM unnest(p_accounts, p_currencies, p_sides, p_amounts) WITH ORDINALITY AS l (account_id, currency, side, amount, n);

    WITH change AS (
        SELECT * FROM unnest(p_single_accounts, p_single_changes) AS c (account_id, amount)
    ), locked AS MATERIALIZED (
        SELECT b.account_id
        FROM ledger_balance b
        JOIN change c ON c.account_id = b.account_id AND b.shard = 0
        ORDER BY b.account_id
        FOR UPDATE OF b
    ), applied AS (
        UPDATE ledger_balance b
        SET balance = b.balance + c.amount
        FROM locked l
        JOIN change c ON c.account_id = l.account_id
        WHERE b.account_id = l.account_id AND b.shard = 0
          AND (b.floor_minor IS NULL OR c.amount >= 0 OR b.balance + c.amount >= b.floor_minor)
        RETURNING b.account_id
    )
    SELECT array_agg(c.account_id ORDER BY c.account_id) INTO refused
    FROM change c
    WHERE c.account_id NOT IN (SELECT a.account_id FROM applied a);
    IF refused IS NOT NULL THEN
        RETURN;
    END IF;

    FOR i IN 1 .. coalesce(array_length(p_sharded_accounts, 1), 0) LOOP
        v_preferred := (entry_id % p_sharded_counts[i])::integer;
        WITH free AS (
            SELECT b.account_id, b.shard
            FROM ledger_balance b
            WHERE b.account_id = p_sharded_accounts[i]
            ORDER BY (b.shard + p_sharded_counts[i] - v_preferred) % p_sharded_counts[i]
            LIMIT 1
            FOR UPDATE SKIP LOCKED
        )
        UPDATE ledger_balance b
        SET balance = b.balance + p_sharded_changes[i]
        FROM free
        WHERE b.account_id = free.account_id AND b.shard = free.shard
        RETURNING b.shard INTO v_shard;
        IF NOT FOUND THEN
            UPDATE ledger_balance b
            SET balance = b.balance + p_sharded_changes[i]
            WHERE b.account_id = p_sharded_accounts[i] AND b.shard = v_preferred
            RETURNING b.shard INTO v_shard;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'ledger: account % has no balance row %', p_sharded_accounts[i], v_preferred
                    USING ERRCODE = 'LG006';
            END IF;
        END IF;
    END LOOP;
END
$$;

CREATE FUNCTION ledger_reject_change() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger: % on % is not allowed; post a new entry instead', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'LG010';
END
$$;

CREATE TRIGGER ledger_entry_immutable BEFORE UPDATE OR DELETE ON ledger_entry
    FOR EACH ROW EXECUTE FUNCTION ledger_reject_change();
CREATE TRIGGER ledger_entry_no_truncate BEFORE TRUNCATE ON ledger_entry
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_change();
CREATE TRIGGER ledger_posting_immutable BEFORE UPDATE OR DELETE ON ledger_posting
    FOR EACH ROW EXECUTE FUNCTION ledger_reject_change();
CREATE TRIGGER ledger_posting_no_truncate BEFORE TRUNCATE ON ledger_posting
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_change();
CREATE TRIGGER ledger_account_immutable BEFORE UPDATE OR DELETE ON ledger_account
    FOR EACH ROW EXECUTE FUNCTION ledger_reject_change();
CREATE TRIGGER ledger_account_no_truncate BEFORE TRUNCATE ON ledger_account
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_change();
-- balance rows change only in their balance column
CREATE TRIGGER ledger_balance_fixed_keys BEFORE UPDATE OF account_id, shard, floor_minor ON ledger_balance
    FOR EACH ROW EXECUTE FUNCTION ledger_reject_change();
CREATE TRIGGER ledger_balance_no_delete BEFORE DELETE ON ledger_balance
    FOR EACH ROW EXECUTE FUNCTION ledger_reject_change();
CREATE TRIGGER ledger_balance_no_truncate BEFORE TRUNCATE ON ledger_balance
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_change();
