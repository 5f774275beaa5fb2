package dev.exactly.payments.webhooks;

import dev.exactly.payments.db.Jdbc;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * The state of one event's delivery to one endpoint.
 *
 * @param endpointId    the endpoint
 * @param status        {@code "pending"}, {@code "delivered"}, {@code "dead_lettered"} or {@code "canceled"}
 * @param attempts      attempts started
 * @param lastStatus    the HTTP status of the last answer, or {@code null} (none, or no answer)
 * @param lastError     why the last attempt failed, or {@code null}
 * @param lastAttemptAt when the last attempt started, or {@code null}
 * @param nextAttemptAt when the next attempt is due, while pending
 * @param deliveredAt   when a 2xx was received, or {@code null}
 */
public record Delivery(
        String endpointId,
        String status,
        int attempts,
        @Nullable Integer lastStatus,
        @Nullable String lastError,
        @Nullable Instant lastAttemptAt,
        @Nullable Instant nextAttemptAt,
        @Nullable Instant deliveredAt) {
    static Delivery map(ResultSet row) throws SQLException {
        String status = row.getString("status");
        return new Delivery(
                row.getString("endpoint_id"),
                status,
                row.getInt("attempts"),
                Jdbc.nullableInt(row, "last_status"),
                row.getString("last_error"),
                Jdbc.instant(row, "last_attempt_at"),
                "pending".equals(status) ? Jdbc.instant(row, "next_attempt_at") : null,
                Jdbc.instant(row, "delivered_at"));
    }
}
