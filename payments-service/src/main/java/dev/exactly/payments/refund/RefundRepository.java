package dev.exactly.payments.refund;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.keys.AnswerColumns;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/** The SQL of {@code payments_refund}, on the caller's connection. */
public final class RefundRepository {
    private static final String COLUMNS = """
            id, tenant, scope_key, fingerprint, charge_id, amount, currency, status, failure_code, ledger_entry_id,
            downstream_key, processor_request, processor_refund_id, recovery_point, attempts,
            response_status, response_type, response_location, response_body, created_at""";

    private static final String INSERT = "INSERT INTO payments_refund (" + COLUMNS + ", updated_at, finished_at)"
            + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

    private static final String BY_SCOPE = "SELECT " + COLUMNS + " FROM payments_refund WHERE scope_key = ?";
    private static final String LOCK = "SELECT " + COLUMNS + " FROM payments_refund WHERE id = ? FOR UPDATE";

    /** What the charge's open refunds hold; the caller holds the charge's row lock. */
    private static final String RESERVED = """
            SELECT coalesce(sum(amount), 0) FROM payments_refund
            WHERE charge_id = ? AND status IN ('pending', 'dead_lettered')
            """;

    /** Phase 3: the final state and the recorded answer, only from an open state. */
    private static final String FINISH = """
            UPDATE payments_refund
            SET status = ?, failure_code = ?, ledger_entry_id = ?, processor_refund_id = ?, recovery_point = 'finished',
                response_status = ?, response_type = ?, response_location = ?, response_body = ?,
                updated_at = ?, finished_at = ?
            WHERE id = ? AND status IN ('pending', 'dead_lettered')
            """;

    /** One more attempt without an answer; dead-lettered with a reason when the attempts are used up. */
    private static final String RECORD_FAILURE = """
            UPDATE payments_refund
            SET attempts = ?, last_error = ?, recovery_point = ?, status = ?, dead_letter_reason = ?, updated_at = ?
            WHERE id = ? AND status = 'pending'
            """;

    public void insert(Connection c, RefundRow row) {
        Jdbc.update(c, INSERT, s -> {
            s.setString(1, row.id());
            s.setString(2, row.tenant());
            s.setString(3, row.scopeKey().hash());
            s.setString(4, row.fingerprint().encoded());
            s.setString(5, row.chargeId());
            s.setLong(6, row.amount());
            s.setString(7, row.currency());
            s.setString(8, row.status().db());
            s.setString(9, row.failureCode());
            setNullableLong(s, 10, row.ledgerEntryId());
            s.setString(11, row.downstreamKey());
            s.setString(12, row.processorRequest());
            s.setString(13, row.processorRefundId());
            s.setString(14, row.recoveryPoint().db());
            s.setInt(15, row.attempts());
            bindAnswer(s, 16, row.answer());
            s.setTimestamp(20, Jdbc.timestamp(row.createdAt()));
            s.setTimestamp(21, Jdbc.timestamp(row.createdAt()));
            s.setTimestamp(22, row.status().isFinished() ? Jdbc.timestamp(row.createdAt()) : null);
        });
    }

    public Optional<RefundRow> findByScope(Connection c, ScopeKey key) {
        return Jdbc.queryOne(c, BY_SCOPE, s -> s.setString(1, key.hash()), RefundRepository::map);
    }

    /** The refund under its row lock. */
    public Optional<RefundRow> lock(Connection c, String id) {
        return Jdbc.queryOne(c, LOCK, s -> s.setString(1, id), RefundRepository::map);
    }

    /** The amount the charge's open refunds reserve; the caller holds the charge's row lock. */
    public long reserved(Connection c, String chargeId) {
        return Jdbc.queryOne(c, RESERVED, s -> s.setString(1, chargeId), rs -> rs.getLong(1))
                .orElse(0L);
    }

    /** Phase 3: the refund's final state; false when it was not open. */
    public boolean finish(
            Connection c,
            String id,
            RefundStatus status,
            @Nullable String failureCode,
            @Nullable Long ledgerEntryId,
            @Nullable String processorRefundId,
            StoredResponse answer,
            Instant now) {
        return Jdbc.update(c, FINISH, s -> {
                    s.setString(1, status.db());
                    s.setString(2, failureCode);
                    setNullableLong(s, 3, ledgerEntryId);
                    s.setString(4, processorRefundId);
                    AnswerColumns.bind(s, 5, answer);
                    s.setTimestamp(9, Jdbc.timestamp(now));
                    s.setTimestamp(10, Jdbc.timestamp(now));
                    s.setString(11, id);
                })
                == 1;
    }

    /** An attempt without an answer, mirrored from the durable record; false when the refund was not pending. */
    public boolean recordFailure(
            Connection c,
            String id,
            int attempts,
            String error,
            RefundPoint point,
            RefundStatus status,
            @Nullable String deadLetterReason,
            Instant now) {
        return Jdbc.update(c, RECORD_FAILURE, s -> {
                    s.setInt(1, attempts);
                    s.setString(2, error);
                    s.setString(3, point.db());
                    s.setString(4, status.db());
                    s.setString(5, deadLetterReason);
                    s.setTimestamp(6, Jdbc.timestamp(now));
                    s.setString(7, id);
                })
                == 1;
    }

    private static void setNullableLong(PreparedStatement s, int index, @Nullable Long value) throws SQLException {
        if (value == null) {
            s.setNull(index, Types.BIGINT);
        } else {
            s.setLong(index, value);
        }
    }

    private static void bindAnswer(PreparedStatement s, int first, @Nullable StoredResponse answer)
            throws SQLException {
        if (answer == null) {
            s.setNull(first, Types.INTEGER);
            s.setNull(first + 1, Types.VARCHAR);
            s.setNull(first + 2, Types.VARCHAR);
            s.setNull(first + 3, Types.BINARY);
        } else {
            AnswerColumns.bind(s, first, answer);
        }
    }

    private static RefundRow map(ResultSet rs) throws SQLException {
        return new RefundRow(
                rs.getString("id"),
                rs.getString("tenant"),
                new ScopeKey(rs.getString("scope_key")),
                Fingerprint.decode(rs.getString("fingerprint")),
                rs.getString("charge_id"),
                rs.getLong("amount"),
                rs.getString("currency"),
                RefundStatus.fromDb(rs.getString("status")),
                rs.getString("failure_code"),
                Jdbc.nullableLong(rs, "ledger_entry_id"),
                rs.getString("downstream_key"),
                rs.getString("processor_request"),
                rs.getString("processor_refund_id"),
                RefundPoint.fromDb(rs.getString("recovery_point")),
                rs.getInt("attempts"),
                AnswerColumns.read(rs),
                Objects.requireNonNull(Jdbc.instant(rs, "created_at")));
    }
}
