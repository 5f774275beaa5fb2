package dev.exactly.payments.webhooks;

import dev.exactly.payments.db.Jdbc;
import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A tenant's webhook endpoint, without its secret.
 *
 * @param id            {@code we_…}
 * @param url           where deliveries are POSTed
 * @param enabledEvents the event types it receives ({@code *}: every type)
 * @param description   the tenant's note, or {@code null}
 * @param enabled       false once disabled (no new deliveries, pending ones canceled)
 * @param createdAt     when it was created
 * @param disabledAt    when it was disabled, or {@code null}
 */
public record Endpoint(
        String id,
        String url,
        List<String> enabledEvents,
        @Nullable String description,
        boolean enabled,
        Instant createdAt,
        @Nullable Instant disabledAt) {
    public Endpoint {
        enabledEvents = List.copyOf(enabledEvents);
    }

    static Endpoint map(ResultSet row) throws SQLException {
        Array events = row.getArray("enabled_events");
        String[] names = (String[]) events.getArray();
        return new Endpoint(
                row.getString("id"),
                row.getString("url"),
                List.of(names),
                row.getString("description"),
                "enabled".equals(row.getString("status")),
                Objects.requireNonNull(Jdbc.instant(row, "created_at")),
                Jdbc.instant(row, "disabled_at"));
    }
}
