-- Exactly ledger, schema version 2: two-phase (pending) entries, for authorize-then-capture.
--
-- A pending entry ('pending', a hold) reserves amounts on both sides without touching the available
-- balance: its postings carry pending = true and move the balance rows' pending columns only. It is
-- resolved at most once, by a new entry linked to it (never by changing it: entries stay immutable):
--   * 'capture': releases every held amount (pending postings mirroring the hold's) and posts what was
--     captured (ordinary postings, per account and side at most what was held); a partial capture thus
--     posts the captured amount and releases the rest;
--   * 'void': releases every held amount and posts nothing.
-- A unique partial index allows one capture or void per pending entry, even for racing writers.
-- Whether a hold is open is derived from the entries (a resolution exists or not); ledger_open_hold is
-- only the queue of open holds that an expiry worker reads (FOR UPDATE SKIP LOCKED), kept in step by
-- ledger_write_entry in the writing transaction.
--
-- Invariants added to the deferred check at commit (so they hold for a writer bypassing the Java API):
-- pending postings balance per currency by themselves, and so do the others; pending postings appear
-- only in pending, capture and void entries (only pending ones in a pending or void entry); a capture or
-- void resolves a pending entry, releases exactly what it holds, and captures no more than it holds.
-- The floor of a balance row now also counts its held decreases: balance - pending_decrease >= floor.

ALTER TABLE ledger_entry DROP CONSTRAINT ledger_entry_kind_check;
ALTER TABLE ledger_entry ADD CONSTRAINT ledger_entry_kind_check
    CHECK (kind IN ('standard', 'reversal', 'refund', 'adjustment', 'pending', 'capture', 'void'));
ALTER TABLE ledger_entry DROP CONSTRAINT ledger_entry_link_check;
ALTER TABLE ledger_entry ADD CONSTRAINT ledger_entry_link_check CHECK (
    (kind IN ('standard', 'pending') AND original_id IS NULL)
    OR (kind IN ('reversal', 'refund', 'capture', 'void') AND original_id IS NOT NULL)
    OR kind = 'adjustment');

-- a pending entry is captured or voided at most once, even by two racing writers
CREATE UNIQUE INDEX ledger_entry_one_resolution ON ledger_entry (original_id) WHERE kind IN ('capture', 'void');

-- A constant default: no table rewrite, existing postings are posted (not pending).
ALTER TABLE ledger_posting ADD COLUMN pending boolean NOT NULL DEFAULT false;

-- point-in-time pending amounts of one account; the available balance as of a time is the sum of all
-- postings (ledger_posting_account_time) less these
CREATE INDEX ledger_posting_pending_account_time ON ledger_posting (account_id, posted_at)
    INCLUDE (side, amount, entry_id) WHERE pending;

-- Open holds on the balance row, on the normal side (pending_increase: raises the balance once
-- captured) and against it (pending_decrease: lowers it), both in minor units. On a sharded account a
-- hold and its release may land on different shards, so only the sum over the shards is meaningful.
ALTER TABLE ledger_balance ADD COLUMN pending_increase bigint NOT NULL DEFAULT 0;
ALTER TABLE ledger_balance ADD COLUMN pending_decrease bigint NOT NULL DEFAULT 0;
ALTER TABLE ledger_balance DROP CONSTRAINT ledger_balance_floor_check;
ALTER TABLE ledger_balance ADD CONSTRAINT ledger_balance_floor_check
    CHECK (floor_minor IS NULL OR balance - pending_decrease >= floor_minor);

-- The open holds, oldest first: inserted with a pending entry, deleted by its capture or void.
CREATE TABLE ledger_open_hold (
    entry_id  bigint      NOT NULL REFERENCES ledger_entry (id),
    posted_at timestamptz NOT NULL,
    CONSTRAINT ledger_open_hold_pkey PRIMARY KEY (entry_id)
);
CREATE INDEX ledger_open_hold_age ON ledger_open_hold (posted_at, entry_id);

CREATE OR REPLACE FUNCTION ledger_check_entry_balanced() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    postings   bigint;
    held       bigint;
    unbalanced text;
    bad        record;
BEGIN
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

-- Replaces ledger_post_entry of version 1 (one write path): writes one entry in one round trip, inside
-- the caller's transaction (the Java API validates first):
--   0. a capture or void first locks the open-hold row of its pending entry, so racing resolutions of
--      one hold and the expiry worker (SKIP LOCKED) queue there before taking any other lock;
--   1. the entry and its postings (a unique conflict - external reference, second reversal, second
--      resolution of a hold - inserts nothing and returns entry_id NULL); a pending entry enters the
--      open-hold queue, a capture or void takes its hold out of it;
--   2. the balance rows of unsharded accounts, locked in ascending account id order (LockRows runs
--      above the sort) and changed (balance and pending columns) unless the floor would be crossed:
--      balance - pending_decrease must stay >= floor unless the change raises it. Such accounts come
--      back in `refused` (locked, not changed) and nothing more is done; the caller must roll back;
--   3. for each sharded account, in ascending id order, the first shard no other transaction holds,
--      starting from entry id mod shards (SKIP LOCKED); only if all are held, wait for that one.
-- A transaction waits for a shard only while holding no shard of that account or a later one, and a
-- shard holder waits for nothing but later shards, so the waits can't form a cycle.
DROP FUNCTION ledger_post_entry(text, bigint, text, text, timestamptz, bigint[], text[], text[], bigint[],
                                bigint[], bigint[], bigint[], bigint[], integer[]);

CREATE FUNCTION ledger_write_entry(
    p_kind text, p_original_id bigint, p_external_ref text, p_description text, p_posted_at timestamptz,
    p_accounts bigint[], p_currencies text[], p_sides text[], p_amounts bigint[], p_pending boolean[],
    p_single_accounts bigint[], p_single_changes bigint[], p_single_increases bigint[], p_single_decreases bigint[],
    p_sharded_accounts bigint[], p_sharded_changes bigint[], p_sharded_increases bigint[],
    p_sharded_decreases bigint[], p_sharded_counts integer[],
    OUT entry_id bigint, OUT refused bigint[])
    LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    v_shard integer;
    v_preferred integer;
BEGIN
    IF p_kind IN ('capture', 'void') THEN
        PERFORM 1 FROM ledger_open_hold h WHERE h.entry_id = p_original_id FOR UPDATE;
    END IF;

    INSERT INTO ledger_entry (kind, original_id, external_ref, description, posted_at)
    VALUES (p_kind, p_original_id, p_external_ref, p_description, p_posted_at)
    ON CONFLICT DO NOTHING
    RETURNING id INTO entry_id;
    IF entry_id IS NULL THEN
        RETURN;
    END IF;

    INSERT INTO ledger_posting (entry_id, line, account_id, currency, side, amount, posted_at, pending)
    SELECT entry_id, l.n, l.account_id, l.currency, l.side, l.amount, p_posted_at, l.pending
    FROM unnest(p_accounts, p_currencies, p_sides, p_amounts, p_pending) WITH ORDINALITY
        AS l (account_id, currency, side, amount, pending, n);

    IF p_kind = 'pending' THEN
        INSERT INTO ledger_open_hold (entry_id, posted_at) VALUES (entry_id, p_posted_at);
    ELSIF p_kind IN ('capture', 'void') THEN
        DELETE FROM ledger_open_hold h WHERE h.entry_id = p_original_id;
    END IF;

    WITH change AS (
        SELECT * FROM unnest(p_single_accounts, p_single_changes, p_single_increases, p_single_decreases)
            AS c (account_id, amount, increase, decrease)
    ), locked AS MATERIALIZED (
        SELECT b.account_id
        FROM ledger_balance b
        JOIN change c ON c.account_id = b.account_id AND b.shard = 0
        ORDER BY b.account_id
        FOR UPDATE OF b
    ), applied AS (
        UPDATE ledger_balance b
        SET balance = b.balance + c.amount,
            pending_increase = b.pending_increase + c.increase,
            pending_decrease = b.pending_decrease + c.decrease
        FROM locked l
        JOIN change c ON c.account_id = l.account_id
        WHERE b.account_id = l.account_id AND b.shard = 0
          AND (b.floor_minor IS NULL OR c.amount - c.decrease >= 0
               OR b.balance + c.amount - (b.pending_decrease + c.decrease) >= b.floor_minor)
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
        SET balance = b.balance + p_sharded_changes[i],
            pending_increase = b.pending_increase + p_sharded_increases[i],
            pending_decrease = b.pending_decrease + p_sharded_decreases[i]
        FROM free
        WHERE b.account_id = free.account_id AND b.shard = free.shard
        RETURNING b.shard INTO v_shard;
        IF NOT FOUND THEN
            UPDATE ledger_balance b
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
    END LOOP;
END
$$;

-- the open-hold queue is written by ledger_write_entry only; TRUNCATE would lose every open hold
CREATE TRIGGER ledger_open_hold_no_truncate BEFORE TRUNCATE ON ledger_open_hold
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_change();
