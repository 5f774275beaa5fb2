package dev.exactly.payments.webhooks;

import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.json.Parsed;
import java.sql.Array;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;

/**
 * The tenant's webhook endpoints: created with a fresh signing secret (shown once), listed, disabled.
 * Disabling cancels the endpoint's pending deliveries in the same transaction; a delivery already being
 * sent finishes.
 */
public final class WebhookEndpoints {
    private static final String COLUMNS = "id, url, enabled_events, description, status, created_at, disabled_at";
    /**
     * Most enabled endpoints of one tenant. Every event is written once per endpoint and sent by the workers all
     * tenants share: without a bound, one tenant's hundreds of slow receivers held the other tenants' deliveries
     * back for minutes.
     */
    public static final int MAX_ENABLED = 16;
    /** The tenant's creations one at a time (its count then holds), other tenants' unhindered. */
    private static final String LOCK_TENANT =
            "SELECT pg_advisory_xact_lock(hashtext('payments_webhook_endpoint'), hashtext(?))";

    private static final String INSERT = """
            INSERT INTO payments_webhook_endpoint (id, tenant, url, enabled_events, description, secret, status, created_at)
            SELECT ?, ?, ?, ?, ?, ?, 'enabled', ?
             WHERE (SELECT count(*) FROM payments_webhook_endpoint WHERE tenant = ? AND status = 'enabled') < ?
            """;
    private static final String LIST = "SELECT " + COLUMNS + """
             FROM payments_webhook_endpoint WHERE tenant = ? ORDER BY created_at, id
            """;
    private static final String DISABLE = """
            UPDATE payments_webhook_endpoint SET status = 'disabled', disabled_at = ?
             WHERE tenant = ? AND id = ? AND status = 'enabled'
            """;
    private static final String CANCEL_PENDING = """
            UPDATE payments_webhook_delivery SET status = 'canceled', claim_token = NULL,
                   last_error = coalesce(last_error, 'endpoint disabled')
             WHERE endpoint_id = ? AND status = 'pending'
            """;
    private static final String FIND = "SELECT " + COLUMNS + """
             FROM payments_webhook_endpoint WHERE tenant = ? AND id = ?
            """;

    private final Jdbc jdbc;
    private final InstantSource clock;
    private final boolean allowPrivateNetworks;

    /**
     * @param allowPrivateNetworks whether deliveries may go to non-public addresses: if not, a URL whose host is
     *                             such an address by itself is refused at creation ({@link EndpointRequest})
     */
    public WebhookEndpoints(Jdbc jdbc, InstantSource clock, boolean allowPrivateNetworks) {
        this.jdbc = jdbc;
        this.clock = clock;
        this.allowPrivateNetworks = allowPrivateNetworks;
    }

    /** Creates an endpoint from a request body. */
    public EndpointResult create(String tenant, byte[] body) {
        return switch (EndpointRequest.parse(body, allowPrivateNetworks)) {
            case Parsed.Invalid<EndpointRequest> invalid -> new EndpointResult.Invalid(invalid.errors());
            case Parsed.Valid<EndpointRequest> valid -> create(tenant, valid.value());
        };
    }

    /** Creates an endpoint with a new secret, unless the tenant has {@value #MAX_ENABLED} enabled ones. */
    public EndpointResult create(String tenant, EndpointRequest request) {
        String id = WebhookIds.endpoint();
        String secret = WebhookIds.secret();
        Instant now = clock.instant();
        int inserted = jdbc.inTransaction(c -> {
            Jdbc.queryOne(c, LOCK_TENANT, s -> s.setString(1, tenant), rs -> Boolean.TRUE);
            Array events = c.createArrayOf("text", request.enabledEvents().toArray());
            return Jdbc.update(c, INSERT, s -> {
                s.setString(1, id);
                s.setString(2, tenant);
                s.setString(3, request.url());
                s.setArray(4, events);
                s.setString(5, request.description());
                s.setString(6, secret);
                s.setTimestamp(7, Jdbc.timestamp(now));
                s.setString(8, tenant);
                s.setInt(9, MAX_ENABLED);
            });
        });
        if (inserted == 0) {
            return new EndpointResult.LimitReached(MAX_ENABLED);
        }
        return new EndpointResult.Created(
                new Endpoint(id, request.url(), request.enabledEvents(), request.description(), true, now, null),
                secret);
    }

    /** The tenant's endpoints, enabled and disabled, oldest first. */
    public List<Endpoint> list(String tenant) {
        return jdbc.query(LIST, s -> s.setString(1, tenant), Endpoint::map);
    }

    /** One of the tenant's endpoints. */
    public Optional<Endpoint> find(String tenant, String id) {
        return jdbc.queryOne(
                FIND,
                s -> {
                    s.setString(1, tenant);
                    s.setString(2, id);
                },
                Endpoint::map);
    }

    /**
     * Disables one of the tenant's endpoints and cancels its pending deliveries; disabling a disabled
     * endpoint changes nothing.
     *
     * @return the endpoint as it is now, or empty when the tenant has no such endpoint
     */
    public Optional<Endpoint> disable(String tenant, String id) {
        return jdbc.inTransaction(c -> {
            int disabled = Jdbc.update(c, DISABLE, s -> {
                s.setTimestamp(1, Jdbc.timestamp(clock.instant()));
                s.setString(2, tenant);
                s.setString(3, id);
            });
            if (disabled == 1) {
                Jdbc.update(c, CANCEL_PENDING, s -> s.setString(1, id));
            }
            return Jdbc.queryOne(
                    c,
                    FIND,
                    s -> {
                        s.setString(1, tenant);
                        s.setString(2, id);
                    },
                    Endpoint::map);
        });
    }
}
