package dev.exactly.payments.charge;

import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.payments.db.DatabaseException;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.db.Pipeline;
import dev.exactly.payments.keys.AnswerColumns;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/** The SQL of {@code payments_charge}. Every statement runs on the caller's connection and transaction. */
public final class ChargeRepository {

    private static final String SELECT = "SELECT " + ChargeRow.COLUMNS + " FROM payments_charge c ";

    /**
     * A new charge; a charge of the same scope (or id) makes it fail with a unique violation, which aborts
     * the transaction ({@link #inserting}).
     */
    private static final String INSERT_NEW = """
            INSERT INTO payments_charge (
                id, tenant, scope_key, fingerprint, customer, amount, currency, description, metadata,
                status, recovery_point, downstream_key, processor_request, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 'charge_created', ?, ?, ?, ?)""";

    /** A new charge unless its scope has one ({@link #insertIfAbsent}). */
    private static final String INSERT = INSERT_NEW + """

            ON CONFLICT (scope_key) DO NOTHING
            """;

    private static final String BY_SCOPE = SELECT + "WHERE c.scope_key = ?";
    private static final String BY_ID = SELECT + "WHERE c.id = ?";
    private static final String BY_ID_FOR_TENANT = SELECT + "WHERE c.id = ? AND c.tenant = ?";
    private static final String LOCK = SELECT + "WHERE c.id = ? FOR UPDATE";
    private static final String LOCK_FOR_TENANT = SELECT + "WHERE c.id = ? AND c.tenant = ? FOR UPDATE";

    /** Newest first; keyset on (created_at, id). */
    private static final String BY_CUSTOMER = SELECT + """
            WHERE c.tenant = ? AND c.customer = ?
            ORDER BY c.created_at DESC, c.id DESC
            LIMIT ?""";

    private static final String BY_CUSTOMER_AFTER = SELECT + """
            WHERE c.tenant = ? AND c.customer = ?
              AND (c.created_at, c.id) < (SELECT a.created_at, a.id FROM payments_charge a
                                        WHERE a.id = ? AND a.tenant = ? AND a.customer = ?)
            ORDER BY c.created_at DESC, c.id DESC
            LIMIT ?""";

    /**
     * Phase 3: the final state and the recorded answer, only from an unfinished state; the row as written
     * comes back in the same round trip (the charge's event carries it).
     */
    private static final String FINISH = """
            UPDATE payments_charge AS c
            SET status = ?, recovery_point = 'finished', processor_charge_id = ?, failure_code = ?,
                failure_message = ?, ledger_entry_id = ?, response_status = ?, response_type = ?,
                response_location = ?, response_body = ?, resolution = ?, updated_at = ?, finished_at = ?
            WHERE c.id = ? AND c.status IN ('pending', 'dead_lettered')
            RETURNING
            """ + ChargeRow.COLUMNS;

    /**
     * Phase 3 sent in one round trip ({@link #finishing}): the final state and the recorded answer, only from
     * an unfinished state, with the journal entry and the hold that the same pipeline wrote just before,
     * found by their references (null when none).
     */
    private static final String FINISH_WITH_ENTRIES = """
            UPDATE payments_charge AS c
            SET status = ?, recovery_point = 'finished', processor_charge_id = ?, failure_code = ?,
                failure_message = ?,
                ledger_entry_id = (SELECT e.id FROM ledger_entry e WHERE e.external_ref = ?),
                hold_entry_id = coalesce((SELECT e.id FROM ledger_entry e WHERE e.external_ref = ?), c.hold_entry_id),
                response_status = ?, response_type = ?, response_location = ?, response_body = ?, resolution = ?,
                updated_at = ?, finished_at = ?
            WHERE c.id = ? AND c.status IN ('pending', 'dead_lettered')""";

    /**
     * Phase 3's write of the charge sent with its commit in one round trip ({@link #finishingGuarded}): the
     * statement of {@link #FINISH_WITH_ENTRIES}, and a guard that raises (SQLSTATE {@code EXP01}, migration V7)
     * unless it finished the charge, this transaction finished the durable record under the owner's token,
     * and wrote the journal entry or hold of the given reference (when one was written), so that the
     * {@code COMMIT} after it is skipped otherwise. "This transaction" is the row version's {@code xmin}: a
     * record finished, or an entry written, by an earlier transaction does not count. The guard is part of the
     * charge's statement rather than one of its own (one statement fewer per charge), and reads the charge's
     * update from the statement's own {@code RETURNING}.
     */
    private static final String FINISH_GUARDED = "WITH settled AS (\n" + FINISH_WITH_ENTRIES + """

            RETURNING 1)
            SELECT payments_require(
                EXISTS (SELECT 1 FROM settled)
                AND EXISTS (SELECT 1 FROM idempotency_records r
                            WHERE r.scope_key = ? AND r.owner_token = ? AND r.status <> 'PROCESSING'
                              AND r.xmin = pg_current_xact_id()::xid)
                AND (?::text IS NULL OR EXISTS (SELECT 1 FROM ledger_entry e
                                                WHERE e.external_ref = ? AND e.xmin = pg_current_xact_id()::xid)),
                'phase 3 of a charge found its durable record, the charge or its journal entry changed: roll back')""";

    /** One more failed attempt; dead-lettered with a reason when the attempts are used up. */
    private static final String RECORD_FAILURE = """
            UPDATE payments_charge
            SET attempts = ?, last_error = ?, recovery_point = ?, status = ?, dead_letter_reason = ?,
                dead_lettered_at = CASE WHEN ?::text = 'dead_lettered' THEN ?::timestamptz ELSE NULL END, updated_at = ?
            WHERE id = ? AND status = 'pending'
            """;

    /** An operator's retry of a dead-lettered charge: attempts start over. */
    private static final String REOPEN = """
            UPDATE payments_charge
            SET status = 'pending', attempts = 0, dead_letter_reason = NULL, dead_lettered_at = NULL,
                resolution = ?, updated_at = ?
            WHERE id = ? AND status IN ('pending', 'dead_lettered')
            """;

    private static final String ADD_REFUND = """
            UPDATE payments_charge
            SET amount_refunded = amount_refunded + ?, updated_at = ?
            WHERE id = ? AND status = 'succeeded' AND amount_refunded + ? <= coalesce(amount_captured, amount)
            """;

    /** The ledger hold of an authorization, written just before its final state in phase 3. */
    private static final String RECORD_HOLD = """
            UPDATE payments_charge SET hold_entry_id = ? WHERE id = ? AND status IN ('pending', 'dead_lettered')
            """;

    /** An authorization resolved by its capture (succeeded) or void (voided), under the row lock. */
    private static final String RESOLVE = """
            UPDATE payments_charge
            SET status = ?, amount_captured = ?, ledger_entry_id = ?, updated_at = ?
            WHERE id = ? AND status = 'authorized'
            """;

    /**
     * Authorized charges created before a time that no capture or void is working on and that were not
     * expired before, oldest first, skipping those another worker locked. They are found through the
     * ledger's open holds (an authorized charge's hold is open until its capture or void resolves it, in the
     * transaction that resolves the charge) and the charge's hold entry (migration V10), not an index of
     * the charge's status, so that a charge's finish changes no indexed column. The open holds are read
     * first, as an array the charges are then looked up by: as a join, a planner without statistics of the
     * charges (autovacuum analyses a busy table late) read every charge the service ever made, each sweep.
     */
    private static final String EXPIRED_AUTHORIZATIONS = SELECT + """
            WHERE c.hold_entry_id = ANY (ARRAY(SELECT h.entry_id FROM ledger_open_hold h))
              AND c.status = 'authorized' AND c.created_at < ?
              AND NOT EXISTS (SELECT 1 FROM payments_charge_action a
                              WHERE a.charge_id = c.id AND (a.status IN ('pending', 'succeeded') OR a.origin = 'expiry'))
            ORDER BY c.created_at
            LIMIT ?
            FOR UPDATE OF c SKIP LOCKED""";

    /** Distinct currencies a customer was charged in, for the balance endpoint. */
    private static final String CUSTOMER_CURRENCIES = """
            SELECT DISTINCT currency FROM payments_charge
            WHERE tenant = ? AND customer = ? AND status IN ('succeeded', 'authorized', 'voided')
            ORDER BY currency
            """;

    /**
     * Pending charges that recovery is working on or should pick up, with their lease. Every open charge has
     * a durable record that never expires while it is open (migration V3), so they are found through the
     * records recovery has not given up on ({@code recovery_due}, indexed by the store), as the recovery worker
     * finds them, not through an index of the charge's status (migration V10).
     */
    private static final String STUCK = "SELECT " + ChargeRow.COLUMNS + """
            , r.lease_expires_at AS lease
            FROM idempotency_records r
            JOIN payments_charge c ON c.scope_key = r.scope_key
            WHERE r.recovery_due IS NOT NULL AND r.expires_at > statement_timestamp()
              AND c.status = 'pending'
              AND (c.attempts > 0 OR r.lease_expires_at <= statement_timestamp())
            ORDER BY c.updated_at
            LIMIT ?""";

    /** Dead-lettered charges: only a dead letter sets {@code dead_lettered_at}, which is indexed (migration V10). */
    private static final String DEAD_LETTERED = "SELECT " + ChargeRow.COLUMNS + """
            , r.lease_expires_at AS lease
            FROM payments_charge c
            LEFT JOIN idempotency_records r ON r.scope_key = c.scope_key AND r.expires_at > statement_timestamp()
            WHERE c.dead_lettered_at IS NOT NULL AND c.status = 'dead_lettered'
            ORDER BY c.updated_at
            LIMIT ?""";

    /** A charge row with the lease of its durable record (for the operator listing). */
    public record WithLease(ChargeRow charge, @Nullable Instant leaseExpiresAt) {}

    /**
     * Inserts a new charge unless its scope already has one (one round trip for a new charge; the scope's
     * charge row outlives every record of the key).
     *
     * @return false when a charge of the same scope exists: nothing was written
     */
    public boolean insertIfAbsent(Connection c, ChargeRow row) {
        return Jdbc.update(c, INSERT, s -> bindNew(s, 1, row)) == 1;
    }

    /**
     * Adds the insert of a new charge to {@code pipeline}. A charge of the same scope makes the pipeline fail
     * with a unique violation ({@link DatabaseException#isUniqueViolation}): the transaction is aborted, roll
     * back.
     */
    public void inserting(Pipeline pipeline, ChargeRow row) {
        pipeline.add(INSERT_NEW, (s, first) -> bindNew(s, first, row), Statement::getUpdateCount);
    }

    private static int bindNew(PreparedStatement s, int first, ChargeRow row) throws SQLException {
        s.setString(first, row.id());
        s.setString(first + 1, row.tenant());
        s.setString(first + 2, row.scopeKey().hash());
        s.setString(first + 3, row.fingerprint().encoded());
        s.setString(first + 4, row.customer());
        s.setLong(first + 5, row.amount());
        s.setString(first + 6, row.currency());
        s.setString(first + 7, row.description());
        s.setString(first + 8, row.metadata());
        s.setString(first + 9, row.downstreamKey());
        s.setString(first + 10, row.processorRequest());
        s.setTimestamp(first + 11, Jdbc.timestamp(row.createdAt()));
        s.setTimestamp(first + 12, Jdbc.timestamp(row.updatedAt()));
        return first + 13;
    }

    public Optional<ChargeRow> findByScope(Connection c, ScopeKey key) {
        return Jdbc.queryOne(c, BY_SCOPE, s -> s.setString(1, key.hash()), ChargeRow::map);
    }

    public Optional<ChargeRow> find(Connection c, String id) {
        return Jdbc.queryOne(c, BY_ID, s -> s.setString(1, id), ChargeRow::map);
    }

    public Optional<ChargeRow> findForTenant(Connection c, String id, String tenant) {
        return Jdbc.queryOne(
                c,
                BY_ID_FOR_TENANT,
                s -> {
                    s.setString(1, id);
                    s.setString(2, tenant);
                },
                ChargeRow::map);
    }

    /** The row under a row lock until the transaction ends. */
    public Optional<ChargeRow> lock(Connection c, String id) {
        return Jdbc.queryOne(c, LOCK, s -> s.setString(1, id), ChargeRow::map);
    }

    /** The tenant's row under a row lock until the transaction ends. */
    public Optional<ChargeRow> lockForTenant(Connection c, String id, String tenant) {
        return Jdbc.queryOne(
                c,
                LOCK_FOR_TENANT,
                s -> {
                    s.setString(1, id);
                    s.setString(2, tenant);
                },
                ChargeRow::map);
    }

    public List<ChargeRow> byCustomer(
            Connection c, String tenant, String customer, @Nullable String startingAfter, int limit) {
        if (startingAfter == null) {
            return Jdbc.query(
                    c,
                    BY_CUSTOMER,
                    s -> {
                        s.setString(1, tenant);
                        s.setString(2, customer);
                        s.setInt(3, limit);
                    },
                    ChargeRow::map);
        }
        List<ChargeRow> page = Jdbc.query(
                c,
                BY_CUSTOMER_AFTER,
                s -> {
                    s.setString(1, tenant);
                    s.setString(2, customer);
                    s.setString(3, startingAfter);
                    s.setString(4, tenant);
                    s.setString(5, customer);
                    s.setInt(6, limit);
                },
                ChargeRow::map);
        // an empty page is the end of the list only after a charge of this customer; a page with rows had one
        if (page.isEmpty() && !isCustomers(c, tenant, customer, startingAfter)) {
            throw new CursorUnknown(startingAfter);
        }
        return page;
    }

    /** Whether {@code id} is a charge of this tenant's customer. */
    private static boolean isCustomers(Connection c, String tenant, String customer, String id) {
        return Jdbc.queryOne(
                        c,
                        "SELECT 1 FROM payments_charge WHERE id = ? AND tenant = ? AND customer = ?",
                        s -> {
                            s.setString(1, id);
                            s.setString(2, tenant);
                            s.setString(3, customer);
                        },
                        rs -> Boolean.TRUE)
                .isPresent();
    }

    /**
     * A page asked to start after a charge that is not the customer's (another customer's or tenant's, or none):
     * an empty page would read as the end of the list.
     */
    public static final class CursorUnknown extends RuntimeException {
        public CursorUnknown(String id) {
            super("starting_after names no charge of this customer: " + id, null, false, false);
        }
    }

    /**
     * Records the final state and its recorded answer (one round trip).
     *
     * @param ledgerEntryId the journal entry of a succeeded charge
     * @return the row as this statement left it, or empty when it was no longer unfinished (nothing written)
     */
    public Optional<ChargeRow> finish(
            Connection c,
            String id,
            ChargeOutcome outcome,
            @Nullable Long ledgerEntryId,
            StoredResponse answer,
            Instant now) {
        return Jdbc.queryOne(
                c,
                FINISH,
                s -> {
                    s.setString(1, outcome.status().db());
                    s.setString(2, outcome.processorChargeId());
                    s.setString(3, outcome.failureCode());
                    s.setString(4, outcome.failureReason());
                    if (ledgerEntryId == null) {
                        s.setNull(5, Types.BIGINT);
                    } else {
                        s.setLong(5, ledgerEntryId);
                    }
                    AnswerColumns.bind(s, 6, answer);
                    s.setString(10, outcome.resolution());
                    s.setTimestamp(11, Jdbc.timestamp(now));
                    s.setTimestamp(12, Jdbc.timestamp(now));
                    s.setString(13, id);
                },
                ChargeRow::map);
    }

    /**
     * Adds phase 3's write of the charge to {@code pipeline}: the final state and its recorded answer, with
     * the journal entry and the hold written before it in the same pipeline, found by their references.
     *
     * @param entryRef the reference of the charge's journal entry, or {@code null}
     * @param holdRef  the reference of the authorization's hold, or {@code null}
     * @return whether the charge was still unfinished (false: nothing was written; roll back)
     */
    public Pipeline.Result<Boolean> finishing(
            Pipeline pipeline,
            String id,
            ChargeOutcome outcome,
            @Nullable String entryRef,
            @Nullable String holdRef,
            StoredResponse answer,
            Instant now) {
        return pipeline.add(
                FINISH_WITH_ENTRIES,
                (s, first) -> bindFinish(s, first, id, outcome, entryRef, holdRef, answer, now),
                s -> s.getUpdateCount() == 1);
    }

    /**
     * Adds phase 3's write of the charge to {@code pipeline} as {@link #finishing} does, guarded, for a pipeline
     * that ends with {@code COMMIT}: the pipeline fails with {@link DatabaseException#isGuardRefusal} unless the
     * charge was still unfinished, and this transaction finished the durable record of {@code scopeKey} under
     * {@code ownerToken} and wrote the entry of {@code guardedRef} (when not {@code null}); the statements before
     * it must be the record's finish and the entry.
     */
    public void finishingGuarded(
            Pipeline pipeline,
            String id,
            ChargeOutcome outcome,
            @Nullable String entryRef,
            @Nullable String holdRef,
            StoredResponse answer,
            Instant now,
            ScopeKey scopeKey,
            String ownerToken,
            @Nullable String guardedRef) {
        pipeline.add(
                FINISH_GUARDED,
                (s, first) -> {
                    int next = bindFinish(s, first, id, outcome, entryRef, holdRef, answer, now);
                    s.setString(next, scopeKey.hash());
                    s.setString(next + 1, ownerToken);
                    s.setString(next + 2, guardedRef);
                    s.setString(next + 3, guardedRef);
                    return next + 4;
                },
                s -> Boolean.TRUE);
    }

    private static int bindFinish(
            PreparedStatement s,
            int first,
            String id,
            ChargeOutcome outcome,
            @Nullable String entryRef,
            @Nullable String holdRef,
            StoredResponse answer,
            Instant now)
            throws SQLException {
        s.setString(first, outcome.status().db());
        s.setString(first + 1, outcome.processorChargeId());
        s.setString(first + 2, outcome.failureCode());
        s.setString(first + 3, outcome.failureReason());
        s.setString(first + 4, entryRef);
        s.setString(first + 5, holdRef);
        AnswerColumns.bind(s, first + 6, answer);
        s.setString(first + 10, outcome.resolution());
        s.setTimestamp(first + 11, Jdbc.timestamp(now));
        s.setTimestamp(first + 12, Jdbc.timestamp(now));
        s.setString(first + 13, id);
        return first + 14;
    }

    public boolean recordFailure(
            Connection c,
            String id,
            int attempts,
            String error,
            RecoveryPoint point,
            ChargeStatus status,
            @Nullable String deadLetterReason,
            Instant now) {
        return Jdbc.update(c, RECORD_FAILURE, s -> {
                    s.setInt(1, attempts);
                    s.setString(2, error);
                    s.setString(3, point.db());
                    s.setString(4, status.db());
                    s.setString(5, deadLetterReason);
                    s.setString(6, status.db());
                    s.setTimestamp(7, Jdbc.timestamp(now));
                    s.setTimestamp(8, Jdbc.timestamp(now));
                    s.setString(9, id);
                })
                == 1;
    }

    public boolean reopen(Connection c, String id, String resolution, Instant now) {
        return Jdbc.update(c, REOPEN, s -> {
                    s.setString(1, resolution);
                    s.setTimestamp(2, Jdbc.timestamp(now));
                    s.setString(3, id);
                })
                == 1;
    }

    /** Adds a refund to a succeeded charge if it fits; the caller holds the row lock. */
    public boolean addRefund(Connection c, String id, long amount, Instant now) {
        return Jdbc.update(c, ADD_REFUND, s -> {
                    s.setLong(1, amount);
                    s.setTimestamp(2, Jdbc.timestamp(now));
                    s.setString(3, id);
                    s.setLong(4, amount);
                })
                == 1;
    }

    public void recordHold(Connection c, String id, long holdEntryId) {
        if (Jdbc.update(c, RECORD_HOLD, s -> {
                    s.setLong(1, holdEntryId);
                    s.setString(2, id);
                })
                != 1) {
            throw new IllegalStateException("charge " + id + " is already finished");
        }
    }

    /**
     * Resolves an authorization: {@link ChargeStatus#SUCCEEDED} with what was captured and the capture entry,
     * or {@link ChargeStatus#VOIDED}.
     *
     * @return whether the charge was still authorized
     */
    public boolean resolve(
            Connection c,
            String id,
            ChargeStatus status,
            @Nullable Long amountCaptured,
            @Nullable Long ledgerEntryId,
            Instant now) {
        return Jdbc.update(c, RESOLVE, s -> {
                    s.setString(1, status.db());
                    if (amountCaptured == null) {
                        s.setNull(2, Types.BIGINT);
                    } else {
                        s.setLong(2, amountCaptured);
                    }
                    if (ledgerEntryId == null) {
                        s.setNull(3, Types.BIGINT);
                    } else {
                        s.setLong(3, ledgerEntryId);
                    }
                    s.setTimestamp(4, Jdbc.timestamp(now));
                    s.setString(5, id);
                })
                == 1;
    }

    /** Up to {@code limit} authorizations created before {@code createdBefore}, locked (SKIP LOCKED). */
    public List<ChargeRow> lockExpiredAuthorizations(Connection c, Instant createdBefore, int limit) {
        return Jdbc.query(
                c,
                EXPIRED_AUTHORIZATIONS,
                s -> {
                    s.setTimestamp(1, Jdbc.timestamp(createdBefore));
                    s.setInt(2, limit);
                },
                ChargeRow::map);
    }

    public List<String> customerCurrencies(Connection c, String tenant, String customer) {
        return Jdbc.query(
                c,
                CUSTOMER_CURRENCIES,
                s -> {
                    s.setString(1, tenant);
                    s.setString(2, customer);
                },
                rs -> rs.getString(1));
    }

    public List<WithLease> stuck(Connection c, int limit) {
        return withLease(c, STUCK, limit);
    }

    public List<WithLease> deadLettered(Connection c, int limit) {
        return withLease(c, DEAD_LETTERED, limit);
    }

    private static List<WithLease> withLease(Connection c, String sql, int limit) {
        return Jdbc.query(
                c, sql, s -> s.setInt(1, limit), rs -> new WithLease(ChargeRow.map(rs), Jdbc.instant(rs, "lease")));
    }
}
