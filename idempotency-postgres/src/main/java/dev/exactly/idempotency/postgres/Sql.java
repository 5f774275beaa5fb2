package dev.exactly.idempotency.postgres;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The store's statements, written against the default table name so that each reads (and runs in
 * psql) as it is, and bound to the configured table once, when the store is built. The configured name
 * is validated by {@link PostgresStoreConfig} against a strict identifier pattern; it is the only text
 * ever substituted, and values are always bound as parameters.
 *
 * <p>Time is the database's: {@code statement_timestamp()}, the start of the current statement, which is
 * one value for the whole statement and, unlike {@code now()}, current even inside a long transaction.
 *
 * @param claim            params: key, fingerprint, owner, lease µs, retention µs, key; one row of
 *                         {@value #CLAIM_COLUMNS} columns
 * @param claimFreshFirst  params: key, fingerprint, owner, lease µs, retention µs, retention µs, retention µs;
 *                         the creation time, or no row
 * @param findFinished     params: key; {@code replay} and {@code response_body} ({@link PackedReplay}), or no row
 * @param claimPhase       params: key, fingerprint, owner, lease µs, retention µs; the row with what a
 *                         phase keeps beside the record (also the claim of a key that is taken)
 * @param find             params: key
 * @param complete         params: status, response status, headers, body, key, owner, channel; a row when it applied
 * @param completeCounted  the same params; the update count
 * @param release          params: key, owner, channel
 * @param renew            params: lease µs, lease µs, key, owner
 * @param markWaiting      params: key
 * @param recoveryPoint    params: recovery point, key, owner
 * @param purge            params: batch size
 * @param checkpoint       params: name, state, key, owner
 * @param retryLater       params: error, delay µs, max attempts, key, owner
 * @param takeOverExpired  params: lease µs, batch size
 * @param takeOverOne      params: owner, lease µs, key
 * @param phases           params: dead-lettered?, limit
 * @param claimShared      params: keys, fingerprints, owners, lease µs, retention µs (arrays, one element per
 *                         claim, in key order); a row of key, owner, creation time per key it inserted
 * @param completeShared   params: headers of all completions (flattened, one after another), keys, owners,
 *                         statuses, response statuses, bodies, first and last index of each one's headers in the
 *                         first array, channel; a row of key, owner per completion that applied
 */
record Sql(
        String claim,
        String claimFreshFirst,
        String findFinished,
        String claimPhase,
        String find,
        String complete,
        String completeCounted,
        String release,
        String renew,
        String markWaiting,
        String recoveryPoint,
        String purge,
        String checkpoint,
        String retryLater,
        String takeOverExpired,
        String takeOverOne,
        String phases,
        String claimShared,
        String completeShared) {

    private static final Pattern DEFAULT_TABLE = Pattern.compile("\\b" + PostgresStoreConfig.DEFAULT_TABLE_NAME);

    /**
     * The claim's first statement: a read of a finished record by primary key, and only when there is none, a
     * call of the function of migration V10 ({@code db/idempotency/V10__claim_fresh_scalar.sql}) in a
     * {@code CASE} of the same row. A finished, unexpired record is returned at once, so a replay takes no row
     * lock, no transaction id, writes no WAL, and costs the server what a read by primary key does (the
     * function's call is not evaluated, and nothing in the plan but the read and a one-row join is started).
     * The function inserts a fresh key ({@code INSERT ... ON CONFLICT DO NOTHING}) and returns its creation
     * time (its lease end and expiry are that time plus the lease and the retention); {@code claimed_at} is
     * null when the key is taken (in flight, expired, a lease to take over, or a row committed after the
     * statement's snapshot), and the store goes on with {@link #CLAIM_PHASE}, V4's function.
     *
     * <p>The read is a subquery that is kept apart ({@code OFFSET 0}), so that its scan returns the nine columns
     * the join needs instead of all of the row's, whose tuple descriptor (a type lookup per column) every
     * execution built (about 2,600 of the server's instructions per claim).
     *
     * <p>Only the columns of the record are sent back, not the bookkeeping of phases and recovery, nor the
     * takeovers (a finished record's are not read); the store reads them by position, in this order ({@link
     * #CLAIM_COLUMNS}).
     */
    private static final String CLAIM = """
            SELECT f.status, f.fingerprint, f.owner_token, f.created_at, f.lease_expires_at, f.expires_at,
                   f.response_status, f.response_headers, f.response_body,
                   CASE WHEN f.status IS NULL THEN idempotency_records_claim_fresh(?, ?, ?, ?, ?) END AS claimed_at
            FROM (VALUES (true)) AS one (x)
            LEFT JOIN (SELECT r.status, r.fingerprint, r.owner_token, r.created_at, r.lease_expires_at, r.expires_at,
                              r.response_status, r.response_headers, r.response_body
                       FROM idempotency_records r
                       WHERE r.scope_key = ? AND r.status <> 'PROCESSING' AND r.expires_at > statement_timestamp()
                       OFFSET 0) AS f
              ON true
            """;

    /**
     * A fresh key's claim as the statement itself, without the read of a finished record before it: the insert
     * of V10's function ({@code INSERT ... ON CONFLICT DO NOTHING}), its creation time returned, no row when the
     * key is taken (then the store goes on with {@link #CLAIM}). The store sends it first while nearly every key
     * it claimed lately was fresh: a fresh key then costs the server one insert instead of a one-row join, a
     * PL/pgSQL call and the same insert through SPI (about 63,000 of its instructions less with the completion),
     * and a key that has a record costs a second statement.
     */
    private static final String CLAIM_FRESH_FIRST = """
            INSERT INTO idempotency_records (
                scope_key, status, fingerprint, owner_token, created_at, lease_expires_at,
                expires_at, retention, takeovers, updated_at, purge_after)
            VALUES (
                ?, 'PROCESSING', ?, ?, statement_timestamp(),
                statement_timestamp() + ? * interval '1 microsecond',
                statement_timestamp() + ? * interval '1 microsecond',
                ? * interval '1 microsecond', 0, statement_timestamp(),
                statement_timestamp() + ? * interval '1 microsecond')
            ON CONFLICT (scope_key) DO NOTHING
            RETURNING created_at
            """;

    /**
     * The read of a finished record alone: its fields packed in {@code replay} (migration V12, {@link
     * PackedReplay}) and its body, or no row for a key without an unexpired record. The store sends it first
     * while most keys it claimed lately had a record, and goes on with {@link #CLAIM} when it finds no row or a
     * row without {@code replay} (a record in flight, or one finished before V12). Two output columns and one
     * condition instead of {@link #CLAIM}'s nine and two: PostgreSQL sets up each again in every execution, which
     * cost it more than the read itself (counted under callgrind: about 57,800 instructions per replay here
     * against 71,900 for the nine columns, and 52,400 for a one-column read by primary key). A record in flight
     * has no {@code replay}, so that no condition on its status is needed.
     */
    private static final String FIND_FINISHED = """
            SELECT replay, response_body
            FROM idempotency_records
            WHERE scope_key = ? AND expires_at > statement_timestamp()
            """;

    /** The columns of {@link #CLAIM}, by position: status .. response_body, then claimed_at. */
    static final int CLAIM_COLUMNS = 10;

    /**
     * A claim by V4's function, with every column of the row: a phase's claim (which also reads its checkpoint
     * and attempts), and the claim of a key that {@link #CLAIM} found taken. Returns no row when the key's row
     * committed after the statement's snapshot: run it again.
     */
    private static final String CLAIM_PHASE = """
            SELECT c.is_claimed AS claimed, (c.rec).*
            FROM idempotency_records_claim(?, ?, ?, ?, ?) AS c
            """;

    private static final String FIND = """
            SELECT *
            FROM idempotency_records
            WHERE scope_key = ? AND expires_at > statement_timestamp()
            """;

    /**
     * The owner's record becomes final and is kept for its retention from now; subscribers hear of it if
     * any process marked the record as waited for ({@code waiters}): a NOTIFY takes a database-wide lock
     * through the commit, so completions nobody waits for do not send one. The NOTIFY is sent by the
     * {@code RETURNING} clause of the update itself (one row when the owner's record was finished, none
     * otherwise), without a second query over a common table expression.
     */
    private static final String COMPLETE = """
            UPDATE idempotency_records
            SET status = ?,
                lease_expires_at = NULL,
                expires_at = statement_timestamp() + retention,
                response_status = ?,
                response_headers = ?,
                response_body = ?,
                updated_at = statement_timestamp()
            WHERE scope_key = ? AND owner_token = ? AND status = 'PROCESSING'
              AND expires_at > statement_timestamp()
            RETURNING CASE WHEN waiters THEN pg_notify(?, scope_key) END
            """;

    /**
     * {@link #COMPLETE} as the store sends it on its own and on a caller's connection: the same update, with the
     * NOTIFY sent by the last condition of its {@code WHERE} (for a row somebody waits for) instead of by a
     * {@code RETURNING} clause, so that the statement returns its update count alone and PostgreSQL builds no
     * projection and sends no row (about 7,000 of its instructions per completion). A condition that precedes it
     * and fails stops it (the conditions of equal cost run in the order written; the expiry's, which costs more,
     * may run after it): a NOTIFY can go out for the owner's record that expired meanwhile, or for a row whose
     * newer version, re-checked after a concurrent write, no longer qualifies, and then wakes a waiter that reads
     * the record again and finds it unchanged; PostgreSQL sends one NOTIFY per channel and payload per
     * transaction, and none for a transaction that rolls back. {@link #COMPLETE}, with its row, stays for {@link
     * PhaseWrite}s, whose callers read whether it applied from the result.
     */
    private static final String COMPLETE_COUNTED = """
            UPDATE idempotency_records
            SET status = ?,
                lease_expires_at = NULL,
                expires_at = statement_timestamp() + retention,
                response_status = ?,
                response_headers = ?,
                response_body = ?,
                updated_at = statement_timestamp()
            WHERE scope_key = ? AND owner_token = ? AND status = 'PROCESSING'
              AND expires_at > statement_timestamp()
              AND (NOT waiters OR pg_notify(?, scope_key) IS NOT NULL)
            """;

    private static final String RELEASE = """
            DELETE FROM idempotency_records
            WHERE scope_key = ? AND owner_token = ? AND status = 'PROCESSING'
              AND expires_at > statement_timestamp()
            RETURNING CASE WHEN waiters THEN pg_notify(?, scope_key) END
            """;

    /**
     * A process is about to wait for the record in flight: completions and releases of it notify from
     * now on. Writes only the first time (a row already marked, finished or absent is left alone).
     */
    private static final String MARK_WAITING = """
            UPDATE idempotency_records
            SET waiters = true
            WHERE scope_key = ? AND status = 'PROCESSING' AND NOT waiters
              AND expires_at > statement_timestamp()
            """;

    /** The lease runs {@code lease} from now; the record lives at least as long as the lease. */
    private static final String RENEW = """
            UPDATE idempotency_records
            SET lease_expires_at = statement_timestamp() + ? * interval '1 microsecond',
                expires_at = greatest(expires_at, statement_timestamp() + ? * interval '1 microsecond'),
                updated_at = statement_timestamp()
            WHERE scope_key = ? AND owner_token = ? AND status = 'PROCESSING'
              AND expires_at > statement_timestamp()
            """;

    private static final String RECOVERY_POINT = """
            UPDATE idempotency_records
            SET recovery_point = ?,
                updated_at = statement_timestamp()
            WHERE scope_key = ? AND owner_token = ? AND status = 'PROCESSING'
              AND expires_at > statement_timestamp()
            """;

    /**
     * A phase's checkpoint: its name and state, and from now on the record does not expire until the
     * phase is finished (the work it stands for must not be forgotten while it is unfinished).
     */
    private static final String CHECKPOINT = """
            UPDATE idempotency_records
            SET recovery_point = ?,
                checkpoint_state = ?,
                expires_at = 'infinity',
                updated_at = statement_timestamp()
            WHERE scope_key = ? AND owner_token = ? AND status = 'PROCESSING'
              AND expires_at > statement_timestamp()
            """;

    /**
     * One more failed attempt: the lease ends after the backoff (then recovery takes the record over), or
     * recovery gives up after the last attempt. The phase is kept (endless expiry) either way. The record
     * gets an owner token nobody holds: the failed owner hands the phase over, so a renewal of its lease
     * still under way cannot keep it past the backoff, nor can a late write of that owner commit.
     */
    private static final String RETRY_LATER = """
            UPDATE idempotency_records
            SET owner_token = replace(gen_random_uuid()::text, '-', ''),
                attempts = attempts + 1,
                last_error = ?,
                lease_expires_at = statement_timestamp() + ? * interval '1 microsecond',
                dead_lettered_at = CASE WHEN attempts + 1 >= ? THEN statement_timestamp() END,
                expires_at = 'infinity',
                updated_at = statement_timestamp()
            WHERE scope_key = ? AND owner_token = ? AND status = 'PROCESSING'
              AND expires_at > statement_timestamp()
            RETURNING attempts, dead_lettered_at, lease_expires_at
            """;

    /**
     * Recovery: up to a batch of phases in progress whose lease ran out, each handed to a fresh owner
     * token with a new lease, in one statement. {@code recovery_due} (migration V6, generated) is the lease
     * end of a phase in progress that recovery has not given up on, null for any other record. {@code SKIP LOCKED}: any number of workers, in this process
     * or others, take disjoint batches, and never wait for a row a live transaction holds.
     */
    private static final String TAKE_OVER_EXPIRED = """
            WITH picked AS MATERIALIZED (
                    SELECT scope_key
                    FROM idempotency_records
                    WHERE recovery_due <= statement_timestamp()
                    ORDER BY recovery_due
                    LIMIT ?
                    FOR UPDATE SKIP LOCKED)
            UPDATE idempotency_records AS r
            SET owner_token = replace(gen_random_uuid()::text, '-', ''),
                lease_expires_at = statement_timestamp() + ? * interval '1 microsecond',
                takeovers = r.takeovers + 1,
                updated_at = statement_timestamp()
            FROM picked
            WHERE r.scope_key = picked.scope_key
              AND r.status = 'PROCESSING' AND r.dead_lettered_at IS NULL
              AND r.lease_expires_at <= statement_timestamp()
            RETURNING r.*
            """;

    /**
     * An operator takes one phase over by hand: a dead letter, or one whose lease ran out. Its attempts
     * start over. A phase a live owner holds is left alone.
     */
    private static final String TAKE_OVER_ONE = """
            UPDATE idempotency_records AS r
            SET owner_token = ?,
                lease_expires_at = statement_timestamp() + ? * interval '1 microsecond',
                takeovers = r.takeovers + 1,
                attempts = 0,
                last_error = NULL,
                dead_lettered_at = NULL,
                updated_at = statement_timestamp()
            WHERE r.scope_key = ? AND r.status = 'PROCESSING' AND r.expires_at > statement_timestamp()
              AND (r.dead_lettered_at IS NOT NULL OR r.lease_expires_at <= statement_timestamp())
            RETURNING r.*
            """;

    /** Phases in progress, oldest change first: recovery's queue ({@code false}) or its dead letters. */
    private static final String PHASES = """
            SELECT *
            FROM idempotency_records
            WHERE status = 'PROCESSING' AND expires_at = 'infinity'
              AND (dead_lettered_at IS NOT NULL) = ?
            ORDER BY updated_at, scope_key
            LIMIT ?
            """;

    /**
     * At most {@code batch} expired rows, oldest first; rows locked by a running claim are skipped (the
     * claim is replacing them anyway), so several purgers never wait for each other. The rows are found
     * through {@code purge_after} (migration V6; since V8 a plain column that the claim writes): the
     * earliest a record can expire, its claim's expiry, which no completion changes (so that the completion
     * is a HOT update); {@code expires_at} decides.
     */
    private static final String PURGE = """
            WITH picked AS MATERIALIZED (
                    SELECT scope_key
                    FROM idempotency_records
                    WHERE purge_after <= statement_timestamp() AND expires_at <= statement_timestamp()
                    ORDER BY purge_after
                    LIMIT ?
                    FOR UPDATE SKIP LOCKED)
            DELETE FROM idempotency_records AS r
            USING picked
            WHERE r.scope_key = picked.scope_key
              AND r.expires_at <= statement_timestamp()
            """;

    /**
     * The fresh-key claims of several callers as one statement and one commit ({@link Combiner}): per key, the
     * insert of {@link #CLAIM_FRESH_FIRST}, the same row from the same values, each key claimed or left alone on its
     * own ({@code ON CONFLICT DO NOTHING} also leaves alone a second row of a key that two callers claim in one
     * statement). The store sends the keys in their order, so that two statements that share keys wait for each
     * other in one order and never deadlock. Each inserted row comes back with its owner, which tells the callers
     * of one key apart.
     */
    private static final String CLAIM_SHARED = """
            INSERT INTO idempotency_records (
                scope_key, status, fingerprint, owner_token, created_at, lease_expires_at,
                expires_at, retention, takeovers, updated_at, purge_after)
            SELECT c.scope_key, 'PROCESSING', c.fingerprint, c.owner_token, statement_timestamp(),
                   statement_timestamp() + c.lease * interval '1 microsecond',
                   statement_timestamp() + c.retention * interval '1 microsecond',
                   c.retention * interval '1 microsecond', 0, statement_timestamp(),
                   statement_timestamp() + c.retention * interval '1 microsecond'
            FROM unnest(?::text[], ?::text[], ?::text[], ?::bigint[], ?::bigint[])
                 AS c (scope_key, fingerprint, owner_token, lease, retention)
            ON CONFLICT (scope_key) DO NOTHING
            RETURNING scope_key, owner_token, created_at
            """;

    /**
     * The completions of several callers as one statement and one commit ({@link Combiner}): per record, the
     * update of {@link #COMPLETE_COUNTED}, with the same conditions (the owner's record, still processing and
     * unexpired) and the same NOTIFY for a record somebody waits for. The headers of every completion travel as one
     * flattened array, each completion's its slice of it (an empty slice is an empty array, as a completion without
     * headers stores). A row comes back for each completion that applied.
     */
    private static final String COMPLETE_SHARED = """
            UPDATE idempotency_records AS r
            SET status = c.status,
                lease_expires_at = NULL,
                expires_at = statement_timestamp() + r.retention,
                response_status = c.response_status,
                response_headers = (?::text[])[c.headers_first:c.headers_last],
                response_body = c.response_body,
                updated_at = statement_timestamp()
            FROM unnest(?::text[], ?::text[], ?::text[], ?::integer[], ?::bytea[], ?::integer[], ?::integer[])
                 AS c (scope_key, owner_token, status, response_status, response_body, headers_first, headers_last)
            WHERE r.scope_key = c.scope_key AND r.owner_token = c.owner_token AND r.status = 'PROCESSING'
              AND r.expires_at > statement_timestamp()
              AND (NOT r.waiters OR pg_notify(?, r.scope_key) IS NOT NULL)
            RETURNING r.scope_key, r.owner_token
            """;

    /** The statements for {@code tableName} (already validated by {@link PostgresStoreConfig}). */
    static Sql forTable(String tableName) {
        return new Sql(
                onTable(CLAIM, tableName),
                onTable(CLAIM_FRESH_FIRST, tableName),
                onTable(FIND_FINISHED, tableName),
                onTable(CLAIM_PHASE, tableName),
                onTable(FIND, tableName),
                onTable(COMPLETE, tableName),
                onTable(COMPLETE_COUNTED, tableName),
                onTable(RELEASE, tableName),
                onTable(RENEW, tableName),
                onTable(MARK_WAITING, tableName),
                onTable(RECOVERY_POINT, tableName),
                onTable(PURGE, tableName),
                onTable(CHECKPOINT, tableName),
                onTable(RETRY_LATER, tableName),
                onTable(TAKE_OVER_EXPIRED, tableName),
                onTable(TAKE_OVER_ONE, tableName),
                onTable(PHASES, tableName),
                onTable(CLAIM_SHARED, tableName),
                onTable(COMPLETE_SHARED, tableName));
    }

    /**
     * Replaces the default table name, and the default name as the prefix of index and constraint names,
     * with {@code tableName}. Identity for the default name.
     */
    static String onTable(String sql, String tableName) {
        return DEFAULT_TABLE.matcher(sql).replaceAll(Matcher.quoteReplacement(tableName));
    }
}
