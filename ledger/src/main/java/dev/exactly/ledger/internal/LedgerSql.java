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
     * Writes an entry, its postings and its balance changes in one round trip (the function
     * {@code ledger_post_entry} of the migration documents the order of its locks). Returns entry_id
     * NULL on a unique conflict, and the unsharded accounts whose floor refused the change.
     */
    static final String POST_ENTRY = """
            SELECT entry_id, refused
            FROM ledger_post_entry(?, ?, ?, ?, ?,
                                   ?::bigint[], ?::text[], ?::text[], ?::bigint[],
                                   ?::bigint[], ?::bigint[],
                                   ?::bigint[], ?::bigint[], ?::integer[])
            """;

    static final String ENTRY_ID_BY_EXTERNAL_REF = """
            SELECT id FROM ledger_entry WHERE external_ref = ?
            """;

    static final String REVERSAL_OF = """
            SELECT id FROM ledger_entry WHERE original_id = ? AND kind = 'reversal'
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
