package dev.exactly.payments.webhooks;

import dev.exactly.payments.db.Jdbc;
import java.time.InstantSource;
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

    /** Dead-lettered deliveries of an event to endpoints still enabled start over, due now. */
    private static final String REDELIVER = """
            UPDATE payments_webhook_delivery d
               SET status = 'pending', attempts = 0, next_attempt_at = ?, claim_token = NULL
              FROM payments_webhook_endpoint e
             WHERE d.event_id = ? AND d.tenant = ? AND d.status = 'dead_lettered'
               AND e.id = d.endpoint_id AND e.status = 'enabled'
            """;

    private final Jdbc jdbc;
    private final InstantSource clock;

    public Events(Jdbc jdbc, InstantSource clock) {
        this.jdbc = jdbc;
        this.clock = clock;
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
            Optional<Long> seq = jdbc.queryOne(
                    SEQ_OF,
                    s -> {
                        s.setString(1, tenant);
                        s.setString(2, after);
                    },
                    row -> row.getLong(1));
            if (seq.isEmpty()) {
                return Optional.empty();
            }
            afterSeq = seq.get();
        }
        long from = afterSeq;
        String typeName = type == null ? null : type.wireName();
        List<Event> rows = jdbc.query(
                PAGE,
                s -> {
                    s.setString(1, tenant);
                    s.setLong(2, from);
                    s.setString(3, typeName);
                    s.setString(4, typeName);
                    s.setInt(5, limit + 1);
                },
                Event::map);
        boolean more = rows.size() > limit;
        List<Event> events = more ? rows.subList(0, limit) : rows;
        return Optional.of(new EventPage(events, more ? events.getLast().id() : null));
    }

    /** One of the tenant's events with the state of its deliveries. */
    public Optional<EventDetail> find(String tenant, String id) {
        return jdbc.inTransaction(c -> Jdbc.queryOne(
                        c,
                        FIND,
                        s -> {
                            s.setString(1, tenant);
                            s.setString(2, id);
                        },
                        Event::map)
                .map(event ->
                        new EventDetail(event, Jdbc.query(c, DELIVERIES, s -> s.setString(1, id), Delivery::map))));
    }

    /**
     * Sends one of the tenant's events again to every enabled endpoint whose delivery was dead-lettered:
     * those deliveries start over (attempts from 1, due now, the same event id and bytes). Delivered,
     * pending and canceled deliveries are left as they are, so a repeat changes nothing more.
     *
     * @return the event with its deliveries as they are now, or empty when the tenant has no such event
     */
    public Optional<EventDetail> redeliver(String tenant, String id) {
        jdbc.inTransaction(c -> Jdbc.update(c, REDELIVER, s -> {
            s.setTimestamp(1, Jdbc.timestamp(clock.instant()));
            s.setString(2, id);
            s.setString(3, tenant);
        }));
        return find(tenant, id);
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
