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

    static final String ENTRY_EXISTS = """
            SELECT 1 FROM ledger_entry WHERE id = ?
            """;

    /**
     * Inserts an entry and all its postings in one statement. Any unique conflict (external reference,
     * second reversal) inserts nothing and returns no row, leaving the transaction usable.
     */
    static final String INSERT_ENTRY = """
            WITH entry AS (
                INSERT INTO ledger_entry (kind, original_id, external_ref, description, posted_at)
                VALUES (?, ?, ?, ?, ?)
                ON CONFLICT DO NOTHING
                RETURNING id, posted_at
            ), postings AS (
                INSERT INTO ledger_posting (entry_id, line, account_id, currency, side, amount, posted_at)
                SELECT entry.id, line.line, line.account_id, line.currency, line.side, line.amount, entry.posted_at
                FROM entry, unnest(?::smallint[], ?::bigint[], ?::text[], ?::text[], ?::bigint[])
                    AS line (line, account_id, currency, side, amount)
            )
            SELECT id FROM entry
            """;

    static final String ENTRY_ID_BY_EXTERNAL_REF = """
            SELECT id FROM ledger_entry WHERE external_ref = ?
            """;

    static final String REVERSAL_OF = """
            SELECT id FROM ledger_entry WHERE original_id = ? AND kind = 'reversal'
            """;

    /**
     * Locks the balance rows of unsharded accounts in ascending account id order (LockRows runs above
     * the sort), then applies the changes. A row whose floor would be crossed is locked but not updated
     * and not returned: the caller sees which one is missing.
     */
    static final String APPLY_BALANCES = """
            WITH change AS (
                SELECT * FROM unnest(?::bigint[], ?::bigint[]) AS c (account_id, amount)
            ), locked AS MATERIALIZED (
                SELECT b.account_id
                FROM ledger_balance b
                JOIN change c ON c.account_id = b.account_id AND b.shard = 0
                ORDER BY b.account_id
                FOR UPDATE OF b
            )
            UPDATE ledger_balance b
            SET balance = b.balance + c.amount
            FROM locked l
            JOIN change c ON c.account_id = l.account_id
            WHERE b.account_id = l.account_id AND b.shard = 0
              AND (b.floor_minor IS NULL OR c.amount >= 0 OR b.balance + c.amount >= b.floor_minor)
            RETURNING b.account_id
            """;

    /**
     * Applies a change to the first shard of a sharded account that no other transaction holds, in the
     * order preferred, preferred + 1, ... (parameters: account, shards - preferred, shards, amount).
     * Returns nothing when every shard is held.
     */
    static final String APPLY_TO_FREE_SHARD = """
            WITH free AS (
                SELECT account_id, shard
                FROM ledger_balance
                WHERE account_id = ?
                ORDER BY (shard + ?) % ?
                LIMIT 1
                FOR UPDATE SKIP LOCKED
            )
            UPDATE ledger_balance b
            SET balance = b.balance + ?
            FROM free
            WHERE b.account_id = free.account_id AND b.shard = free.shard
            RETURNING b.shard
            """;

    /** Applies a change to one shard, waiting for its lock. */
    static final String APPLY_TO_SHARD = """
            UPDATE ledger_balance SET balance = balance + ? WHERE account_id = ? AND shard = ? RETURNING shard
            """;

    static final String SHARD_BALANCE = """
            SELECT balance FROM ledger_balance WHERE account_id = ? AND shard = ?
            """;

    static final String ACCOUNT_BALANCE = """
            SELECT sum(balance) FROM ledger_balance WHERE account_id = ?
            """;

    /** Normal-side balance from the postings up to a time; the first parameter is the normal side. */
    static final String ACCOUNT_BALANCE_AS_OF = """
            SELECT coalesce(sum(CASE WHEN side = ? THEN amount::numeric ELSE -amount::numeric END), 0)
            FROM ledger_posting
            WHERE account_id = ? AND posted_at <= ?
            """;

    /**
     * Entries with their postings, by id. Entries never change once committed, so ids found by one
     * statement can be read by the next.
     */
    static final String ENTRIES_BY_IDS = """
            SELECT e.id, e.kind, e.original_id, e.external_ref, e.description, e.posted_at,
                   p.line, p.account_id, p.currency, p.side, p.amount
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

    /** Current normal-side balances of every account (one snapshot). */
    static final String TRIAL_BALANCE = """
            SELECT a.id, a.code, a.type, a.normal_balance, a.currency, a.floor_minor, a.shards, a.created_at,
                   sum(b.balance) AS balance
            FROM ledger_account a
            JOIN ledger_balance b ON b.account_id = a.id
            GROUP BY a.id
            ORDER BY a.currency, a.id
            """;

    /** Normal-side balances of every account from the postings up to a time. */
    static final String TRIAL_BALANCE_AS_OF = """
            SELECT a.id, a.code, a.type, a.normal_balance, a.currency, a.floor_minor, a.shards, a.created_at,
                   CASE a.normal_balance WHEN 'debit' THEN coalesce(p.net, 0) ELSE -coalesce(p.net, 0) END AS balance
            FROM ledger_account a
            LEFT JOIN (
                SELECT account_id, sum(CASE WHEN side = 'debit' THEN amount::numeric ELSE -amount::numeric END) AS net
                FROM ledger_posting
                WHERE posted_at <= ?
                GROUP BY account_id
            ) p ON p.account_id = a.id
            ORDER BY a.currency, a.id
            """;
}
