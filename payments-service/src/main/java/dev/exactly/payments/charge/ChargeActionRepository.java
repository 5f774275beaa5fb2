package dev.exactly.payments.charge;

import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.keys.AnswerColumns;
import java.sql.Connection;
import java.sql.Types;
import java.time.Instant;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/** The SQL of {@code payments_charge_action}. Every statement runs on the caller's connection and transaction. */
public final class ChargeActionRepository {
    private static final String SELECT = "SELECT " + ChargeAction.COLUMNS + " FROM payments_charge_action a ";
    private static final String BY_SCOPE = SELECT + "WHERE a.scope_key = ?";
    private static final String LOCK = SELECT + "WHERE a.id = ? FOR UPDATE";
    /** The pending or succeeded action of a charge (at most one: a partial unique index). */
    private static final String ACTIVE = SELECT + "WHERE a.charge_id = ? AND a.status IN ('pending', 'succeeded')";

    private static final String INSERT = """
            INSERT INTO payments_charge_action (
                id, tenant, scope_key, fingerprint, charge_id, kind, origin, amount, status, downstream_key,
                failure_code, response_status, response_type, response_location, response_body, created_at,
                updated_at, finished_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """;

    /** The action's outcome and its recorded answer, only from pending. */
    private static final String FINISH = """
            UPDATE payments_charge_action
            SET status = ?, ledger_entry_id = ?, failure_code = ?, response_status = ?, response_type = ?,
                response_location = ?, response_body = ?, updated_at = ?, finished_at = ?
            WHERE id = ? AND status = 'pending'
            """;

    private static final String RECORD_ATTEMPT = """
            UPDATE payments_charge_action
            SET attempts = ?, last_error = ?, dead_letter_reason = ?, updated_at = ?
            WHERE id = ? AND status = 'pending'
            """;

    /**
     * Inserts an action: pending (no answer yet), or refused with its answer.
     *
     * @param failureCode why a refused action was refused
     */
    public void insert(Connection c, ChargeAction action, @Nullable String failureCode, Instant now) {
        StoredResponse answer = action.answer();
        Jdbc.update(c, INSERT, s -> {
            s.setString(1, action.id());
            s.setString(2, action.tenant());
            s.setString(3, action.scopeKey().hash());
            s.setString(4, action.fingerprint().encoded());
            s.setString(5, action.chargeId());
            s.setString(6, action.kind().db());
            s.setString(7, action.origin().db());
            if (action.amount() == null) {
                s.setNull(8, Types.BIGINT);
            } else {
                s.setLong(8, action.amount());
            }
            s.setString(9, action.status().db());
            s.setString(10, action.downstreamKey());
            s.setString(11, failureCode);
            if (answer == null) {
                s.setNull(12, Types.INTEGER);
                s.setNull(13, Types.VARCHAR);
                s.setNull(14, Types.VARCHAR);
                s.setNull(15, Types.BINARY);
            } else {
                AnswerColumns.bind(s, 12, answer);
            }
            s.setTimestamp(16, Jdbc.timestamp(now));
            s.setTimestamp(17, Jdbc.timestamp(now));
            s.setTimestamp(18, answer == null ? null : Jdbc.timestamp(now));
        });
    }

    public Optional<ChargeAction> findByScope(Connection c, ScopeKey key) {
        return Jdbc.queryOne(c, BY_SCOPE, s -> s.setString(1, key.hash()), ChargeAction::map);
    }

    /** The row under a row lock until the transaction ends. */
    public Optional<ChargeAction> lock(Connection c, String id) {
        return Jdbc.queryOne(c, LOCK, s -> s.setString(1, id), ChargeAction::map);
    }

    /** The charge's pending or succeeded action, if any. */
    public Optional<ChargeAction> active(Connection c, String chargeId) {
        return Jdbc.queryOne(c, ACTIVE, s -> s.setString(1, chargeId), ChargeAction::map);
    }

    /**
     * Records the outcome of a pending action.
     *
     * @return whether the action was still pending
     */
    public boolean finish(
            Connection c,
            String id,
            ChargeAction.Status status,
            @Nullable Long ledgerEntryId,
            @Nullable String failureCode,
            StoredResponse answer,
            Instant now) {
        return Jdbc.update(c, FINISH, s -> {
                    s.setString(1, status.db());
                    if (ledgerEntryId == null) {
                        s.setNull(2, Types.BIGINT);
                    } else {
                        s.setLong(2, ledgerEntryId);
                    }
                    s.setString(3, failureCode);
                    AnswerColumns.bind(s, 4, answer);
                    s.setTimestamp(8, Jdbc.timestamp(now));
                    s.setTimestamp(9, Jdbc.timestamp(now));
                    s.setString(10, id);
                })
                == 1;
    }

    /** A processor attempt without an answer (and the reason, once recovery gave up). */
    public void recordAttempt(
            Connection c, String id, int attempts, String error, @Nullable String deadLetterReason, Instant now) {
        Jdbc.update(c, RECORD_ATTEMPT, s -> {
            s.setInt(1, attempts);
            s.setString(2, error);
            s.setString(3, deadLetterReason);
            s.setTimestamp(4, Jdbc.timestamp(now));
            s.setString(5, id);
        });
    }
}
