package dev.exactly.payments.webhooks;

import dev.exactly.payments.db.Jdbc;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Objects;

/**
 * An event of the outbox.
 *
 * @param id        {@code evt_…}: the id every delivery carries
 * @param type      its type's wire name
 * @param subjectId the charge or refund it is about
 * @param createdAt when it was recorded
 * @param body      the JSON document every delivery sends
 */
public record Event(String id, String type, String subjectId, Instant createdAt, String body) {
    static Event map(ResultSet row) throws SQLException {
        return new Event(
                row.getString("id"),
                row.getString("type"),
                row.getString("subject_id"),
                Objects.requireNonNull(Jdbc.instant(row, "created_at")),
                row.getString("body"));
    }
}
