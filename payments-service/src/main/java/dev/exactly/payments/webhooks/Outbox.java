package dev.exactly.payments.webhooks;

import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.db.Pipeline;
import dev.exactly.payments.json.Json;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Instant;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.Map;
import tools.jackson.databind.util.RawValue;

/**
 * The transactional outbox: business code records an event on the connection of its own transaction,
 * the one that changes the charge or refund. The event row and its deliveries (one per enabled endpoint
 * of the tenant whose filter takes the type) commit with the change or roll back with it: an event is never
 * sent for a change that did not happen, and never lost for one that did.
 *
 * <p>The event's document is rendered once, here, and every delivery sends exactly these bytes:
 * <pre>{"id":"evt_…","object":"event","type":"charge.succeeded","created":1764590000,"subject":"ch_…","data":{"object":{…}}}</pre>
 */
public final class Outbox {
    /**
     * The event row and one pending delivery per enabled endpoint of the tenant that takes the type (or
     * every type), in one statement (one round trip): the deliveries are selected from the inserted event.
     */
    private static final String RECORD = """
            WITH recorded AS (
                INSERT INTO payments_event (id, tenant, type, subject_id, body, created_at)
                VALUES (?, ?, ?, ?, ?, ?)
                RETURNING id, tenant, type, created_at)
            INSERT INTO payments_webhook_delivery (event_id, endpoint_id, tenant, status, next_attempt_at, created_at)
            SELECT recorded.id, e.id, e.tenant, 'pending', recorded.created_at, recorded.created_at
              FROM recorded
              JOIN payments_webhook_endpoint e ON e.tenant = recorded.tenant
             WHERE e.status = 'enabled' AND (recorded.type = ANY (e.enabled_events) OR '*' = ANY (e.enabled_events))
            """;

    private final InstantSource clock;

    public Outbox(InstantSource clock) {
        this.clock = clock;
    }

    /**
     * Records an event in the caller's transaction ({@code connection} must not be in auto-commit mode
     * for the event to commit with the caller's writes).
     *
     * @param tenant      the tenant the event belongs to
     * @param type        what happened
     * @param subjectId   the charge or refund it happened to
     * @param payloadJson the subject as the API shows it, a JSON object: the event's {@code data.object}
     * @return the event's id, which every delivery carries ({@code Exactly-Event-Id})
     * @throws IllegalArgumentException when the payload is not a JSON object
     */
    public String record(Connection connection, String tenant, EventType type, String subjectId, String payloadJson) {
        Pipeline pipeline = new Pipeline();
        String id = record(pipeline, tenant, type, subjectId, payloadJson.getBytes(StandardCharsets.UTF_8));
        pipeline.run(connection);
        return id;
    }

    /**
     * Adds the recording of an event to {@code pipeline}, sent with the caller's other statements in one
     * round trip (see {@link #record(Connection, String, EventType, String, String)}).
     *
     * @param payloadJson the subject as the API shows it, the bytes of a JSON object
     * @return the event's id
     */
    public String record(Pipeline pipeline, String tenant, EventType type, String subjectId, byte[] payloadJson) {
        if (!Json.isObject(payloadJson)) {
            throw new IllegalArgumentException("an event's payload is a JSON object");
        }
        // the payload's bytes as they are: checked, not parsed into a tree and written again
        RawValue payload = new RawValue(new String(payloadJson, StandardCharsets.UTF_8));
        String id = WebhookIds.event();
        Instant now = clock.instant();
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("object", payload);
        Map<String, Object> event = new LinkedHashMap<>();
        event.put("id", id);
        event.put("object", "event");
        event.put("type", type.wireName());
        event.put("created", now.getEpochSecond());
        event.put("subject", subjectId);
        event.put("data", data);
        String body = new String(Json.write(event), StandardCharsets.UTF_8);
        pipeline.add(
                RECORD,
                (s, first) -> {
                    s.setString(first, id);
                    s.setString(first + 1, tenant);
                    s.setString(first + 2, type.wireName());
                    s.setString(first + 3, subjectId);
                    s.setString(first + 4, body);
                    s.setTimestamp(first + 5, Jdbc.timestamp(now));
                    return first + 6;
                },
                Statement::getUpdateCount);
        return id;
    }
}
