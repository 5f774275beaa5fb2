package dev.exactly.payments.refund;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.StoredResponse;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.keys.AnswerColumns;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/** The SQL of {@code payments_refund}, on the caller's connection. */
public final class RefundRepository {

    private static final String INSERT = """
            INSERT INTO payments_refund (
                id, tenant, scope_key, fingerprint, charge_id, amount, currency, status, failure_code,
                ledger_entry_id, response_status, response_type, response_location, response_body, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """;

    private static final String BY_SCOPE = """
            SELECT id, tenant, scope_key, fingerprint, charge_id, amount, currency, status, failure_code,
                   ledger_entry_id, response_status, response_type, response_location, response_body, created_at
            FROM payments_refund
            WHERE scope_key = ?
            """;

    /**
     * One refund decision.
     *
     * @param status    {@code succeeded} or {@code refused}
     * @param answer    the recorded answer
     */
    public record RefundRow(String id, String tenant, ScopeKey scopeKey, Fingerprint fingerprint, String chargeId,
            long amount, @Nullable String currency, String status, @Nullable String failureCode,
            @Nullable Long ledgerEntryId, StoredResponse answer, Instant createdAt) {}

    public void insert(Connection c, RefundRow row) {
        Jdbc.update(c, INSERT, s -> {
            s.setString(1, row.id());
            s.setString(2, row.tenant());
            s.setString(3, row.scopeKey().hash());
            s.setString(4, row.fingerprint().encoded());
            s.setString(5, row.chargeId());
            s.setLong(6, row.amount());
            s.setString(7, row.currency());
            s.setString(8, row.status());
            s.setString(9, row.failureCode());
            if (row.ledgerEntryId() == null) {
                s.setNull(10, Types.BIGINT);
            } else {
                s.setLong(10, row.ledgerEntryId());
            }
            AnswerColumns.bind(s, 11, row.answer());
            s.setTimestamp(15, Jdbc.timestamp(row.createdAt()));
        });
    }

    public Optional<RefundRow> findByScope(Connection c, ScopeKey key) {
        return Jdbc.queryOne(c, BY_SCOPE, s -> s.setString(1, key.hash()), RefundRepository::map);
    }

    private static RefundRow map(ResultSet rs) throws SQLException {
        return new RefundRow(rs.getString("id"), rs.getString("tenant"), new ScopeKey(rs.getString("scope_key")),
                Fingerprint.decode(rs.getString("fingerprint")), rs.getString("charge_id"), rs.getLong("amount"),
                rs.getString("currency"), rs.getString("status"), rs.getString("failure_code"),
                Jdbc.nullableLong(rs, "ledger_entry_id"), Objects.requireNonNull(AnswerColumns.read(rs)),
                Objects.requireNonNull(Jdbc.instant(rs, "created_at")));
    }
}
