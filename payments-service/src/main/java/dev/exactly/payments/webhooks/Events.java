package dev.exactly.payments.webhooks;

import dev.exactly.payments.db.Jdbc;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/** The tenant's events, oldest first in keyset pages, and one event with its deliveries. */
public final class Events {
    private static final String COLUMNS = "seq, id, type, subject_id, created_at, body";
    private static final String PAGE = "SELECT " + COLUMNS + """
             FROM payments_event
             WHERE tenant = ? AND seq > ? AND (?::text IS NULL OR type = ?)
             ORDER BY seq
             LIMIT ?
            """;
    private static final String SEQ_OF = "SELECT seq FROM payments_event WHERE tenant = ? AND id = ?";
    private static final String FIND = "SELECT " + COLUMNS + " FROM payments_event WHERE tenant = ? AND id = ?";
    private static final String DELIVERIES = """
            SELECT endpoint_id, status, attempts, last_status, last_error, last_attempt_at, next_attempt_at, delivered_at
              FROM payments_webhook_delivery WHERE event_id = ? ORDER BY id
            """;

    private final Jdbc jdbc;

    public Events(Jdbc jdbc) {
        this.jdbc = jdbc;
    }

    /**
     * A page of the tenant's events.
     *
     * @param after the last event of the previous page, or {@code null} for the first page
     * @param type  only events of this type, or {@code null}
     * @return empty when {@code after} names no event of the tenant
     */
    public Optional<EventPage> page(String tenant, @Nullable String after, int limit, @Nullable EventType type) {
        long afterSeq = 0;
        if (after != null) {
            Optional<Long> seq = jdbc.queryOne(SEQ_OF, s -> {
                s.setString(1, tenant);
                s.setString(2, after);
            }, row -> row.getLong(1));
            if (seq.isEmpty()) {
                return Optional.empty();
            }
            afterSeq = seq.get();
        }
        long from = afterSeq;
        String typeName = type == null ? null : type.wireName();
        List<Event> rows = jdbc.query(PAGE, s -> {
            s.setString(1, tenant);
            s.setLong(2, from);
            s.setString(3, typeName);
            s.setString(4, typeName);
            s.setInt(5, limit + 1);
        }, Event::map);
        boolean more = rows.size() > limit;
        List<Event> events = more ? rows.subList(0, limit) : rows;
        return Optional.of(new EventPage(events, more ? events.getLast().id() : null));
    }

    /** One of the tenant's events with the state of its deliveries. */
    public Optional<EventDetail> find(String tenant, String id) {
        return jdbc.inTransaction(c -> Jdbc.queryOne(c, FIND, s -> {
            s.setString(1, tenant);
            s.setString(2, id);
        }, Event::map).map(event -> new EventDetail(event,
                Jdbc.query(c, DELIVERIES, s -> s.setString(1, id), Delivery::map))));
    }

    /**
     * A page of events.
     *
     * @param events    oldest first
     * @param nextAfter the cursor of the next page ({@code after}), or {@code null} on the last page
     */
    public record EventPage(List<Event> events, @Nullable String nextAfter) {
        public EventPage {
            events = List.copyOf(events);
        }
    }

    /** An event and its deliveries, one per endpoint that was listening when it was recorded. */
    public record EventDetail(Event event, List<Delivery> deliveries) {
        public EventDetail {
            deliveries = List.copyOf(deliveries);
        }
    }
}
