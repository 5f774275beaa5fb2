package dev.exactly.ledger.internal;

/** Every SQL statement of the ledger, as constant text. Table names are unqualified (search_path). */
final class LedgerSql {

    private LedgerSql() {}

    /** Opens an account and its balance rows; returns nothing when the code exists. */
    static final String INSERT_ACCOUNT = """
            WITH account AS (
                INSERT INTO ledger_account (code, type, normal_balance, currency, floor_minor, shards, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (code) DO NOTHING
                RETURNING id, code, type, normal_balance, currency, floor_minor, shards, created_at
            ), balances AS (
                INSERT INTO ledger_balance (account_id, shard, floor_minor)
                SELECT account.id, shard, account.floor_minor
                FROM account, generate_series(0, account.shards - 1) AS shard
            )
            SELECT id, code, type, normal_balance, currency, floor_minor, shards, created_at FROM account
            """;

    static final String ACCOUNTS_BY_ID = """
            SELECT id, code, type, normal_balance, currency, floor_minor, shards, created_at
            FROM ledger_account
            WHERE id = ANY (?)
            """;

    static final String ACCOUNT_BY_CODE = """
            SELECT id, code, type, normal_balance, currency, floor_minor, shards, created_at
            FROM ledger_account
            WHERE code = ?
            """;

    static final String ENTRY_KIND = """
            SELECT kind FROM ledger_entry WHERE id = ?
            """;

    /**
     * Writes an entry, its postings and its balance changes in one round trip (the function
     * {@code ledger_write_entry} of the migrations documents the order of its locks). Returns entry_id
     * NULL on a unique conflict, and the unsharded accounts whose floor refused the change.
     */
    static final String WRITE_ENTRY = """
            SELECT entry_id, refused
            FROM ledger_write_entry(?, ?, ?, ?, ?,
                                    ?::bigint[], ?::text[], ?::text[], ?::bigint[], ?::boolean[],
                                    ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[],
                                    ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::integer[])
            """;

    static final String ENTRY_ID_BY_EXTERNAL_REF = """
            SELECT id FROM ledger_entry WHERE external_ref = ?
            """;

    static final String REVERSAL_OF = """
            SELECT id FROM ledger_entry WHERE original_id = ? AND kind = 'reversal'
            """;

    /** A balance row's balance less its held decreases (what its floor is checked against). */
    static final String SHARD_UNRESERVED = """
            SELECT balance - pending_decrease FROM ledger_balance WHERE account_id = ? AND shard = ?
            """;

    static final String ACCOUNT_BALANCES = """
            SELECT sum(balance), sum(pending_increase), sum(pending_decrease)
            FROM ledger_balance WHERE account_id = ?
            """;

    /**
     * Normal-side balances from the postings up to a time: the total of all postings, and the pending
     * amounts held on the normal side (increase) and on the other (decrease), net of their releases.
     * The available balance is the total less the net pending amount. Parameters: the account's normal
     * side, the account, the time.
     */
    static final String ACCOUNT_BALANCES_AS_OF = """
            WITH args (normal_side, account_id, as_of) AS (VALUES (?::text, ?::bigint, ?::timestamptz))
            SELECT (SELECT coalesce(sum(CASE WHEN p.side = a.normal_side THEN p.amount::numeric
                                             ELSE -p.amount::numeric END), 0)
                    FROM ledger_posting p
                    WHERE p.account_id = a.account_id AND p.posted_at <= a.as_of) AS total,
                   h.increase, h.decrease
            FROM args a
            CROSS JOIN LATERAL (
                SELECT coalesce(sum(CASE WHEN e.kind = 'pending' AND p.side = a.normal_side THEN p.amount::numeric
                                         WHEN e.kind <> 'pending' AND p.side <> a.normal_side THEN -p.amount::numeric
                                         ELSE 0 END), 0) AS increase,
                       coalesce(sum(CASE WHEN e.kind = 'pending' AND p.side <> a.normal_side THEN p.amount::numeric
                                         WHEN e.kind <> 'pending' AND p.side = a.normal_side THEN -p.amount::numeric
                                         ELSE 0 END), 0) AS decrease
                FROM ledger_posting p
                JOIN ledger_entry e ON e.id = p.entry_id
                WHERE p.account_id = a.account_id AND p.posted_at <= a.as_of AND p.pending
            ) h
            """;

    /** The capture or void of a pending entry. */
    static final String RESOLUTION_OF = """
            SELECT id FROM ledger_entry WHERE original_id = ? AND kind IN ('capture', 'void')
            """;

    /**
     * Open holds written before a time, oldest first, locked for the caller's transaction; holds that
     * another transaction has locked (being captured, voided, or listed by another worker) are skipped.
     */
    static final String LOCK_OPEN_HOLDS = """
            SELECT entry_id FROM ledger_open_hold
            WHERE posted_at < ?
            ORDER BY posted_at, entry_id
            LIMIT ?
            FOR UPDATE SKIP LOCKED
            """;

    /**
     * Entries with their postings, by id. Entries never change once committed, so ids found by one
     * statement can be read by the next.
     */
    static final String ENTRIES_BY_IDS = """
            SELECT e.id, e.kind, e.original_id, e.external_ref, e.description, e.posted_at,
                   p.line, p.account_id, p.currency, p.side, p.amount, p.pending
            FROM ledger_entry e
            JOIN ledger_posting p ON p.entry_id = e.id
            WHERE e.id = ANY (?)
            ORDER BY e.id, p.line
            """;

    static final String LINKED_ENTRY_IDS = """
            SELECT id FROM ledger_entry WHERE original_id = ? ORDER BY id
            """;

    static final String PAGE_ENTRY_IDS = """
            SELECT id FROM ledger_entry WHERE id > ? ORDER BY id LIMIT ?
            """;

    static final String ACCOUNT_PAGE_ENTRY_IDS = """
            SELECT DISTINCT entry_id FROM ledger_posting
            WHERE account_id = ? AND entry_id > ?
            ORDER BY entry_id LIMIT ?
            """;

    /** Current normal-side available balances and net pending amounts of every account (one snapshot). */
    static final String TRIAL_BALANCE = """
            SELECT a.id, a.code, a.type, a.normal_balance, a.currency, a.floor_minor, a.shards, a.created_at,
                   sum(b.balance) AS balance, sum(b.pending_increase - b.pending_decrease) AS pending
            FROM ledger_account a
            JOIN ledger_balance b ON b.account_id = a.id
            GROUP BY a.id
            ORDER BY a.currency, a.id
            """;

    /** Normal-side available balances and net pending amounts of every account from the postings up to a time. */
    static final String TRIAL_BALANCE_AS_OF = """
            SELECT a.id, a.code, a.type, a.normal_balance, a.currency, a.floor_minor, a.shards, a.created_at,
                   CASE a.normal_balance WHEN 'debit' THEN coalesce(p.posted, 0) ELSE -coalesce(p.posted, 0) END AS balance,
                   CASE a.normal_balance WHEN 'debit' THEN coalesce(p.held, 0) ELSE -coalesce(p.held, 0) END AS pending
            FROM ledger_account a
            LEFT JOIN (
                SELECT account_id,
                       sum(CASE WHEN side = 'debit' THEN amount::numeric ELSE -amount::numeric END)
                           FILTER (WHERE NOT pending) AS posted,
                       sum(CASE WHEN side = 'debit' THEN amount::numeric ELSE -amount::numeric END)
                           FILTER (WHERE pending) AS held
                FROM ledger_posting
                WHERE posted_at <= ?
                GROUP BY account_id
            ) p ON p.account_id = a.id
            ORDER BY a.currency, a.id
            """;
}
