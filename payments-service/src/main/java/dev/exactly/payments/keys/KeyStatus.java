package dev.exactly.payments.keys;

import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.payments.db.Jdbc;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * {@code GET /v1/idempotency-keys/{key}}: what the durable tier knows about one of the caller's keys, on
 * each idempotent route: status, recovery point, created and expiry times, lease, replay count, and the
 * resource it created. The scope includes the caller's tenant, so no tenant can see another's keys. A key
 * whose record expired still shows its charge or refund (that row keeps the fingerprint forever).
 */
public final class KeyStatus {
    private static final String CHARGE_BY_SCOPE = """
            SELECT id, status, recovery_point, created_at FROM payments_charge WHERE scope_key = ?
            """;
    private static final String REFUND_BY_SCOPE = """
            SELECT id, status, created_at FROM payments_refund WHERE scope_key = ?
            """;

    private final DurableTier durable;
    private final Jdbc jdbc;

    public KeyStatus(DurableTier durable, Jdbc jdbc) {
        this.durable = durable;
        this.jdbc = jdbc;
    }

    private record Resource(String type, String id, String status, @Nullable String recoveryPoint, @Nullable Instant created) {}

    /** The status of the key on every route where it was used; empty when it was never used. */
    public List<Map<String, Object>> describe(String tenant, IdempotencyKey key) {
        List<Map<String, Object>> found = new java.util.ArrayList<>();
        describe(tenant, key, DurableTier.CHARGES_ROUTE).ifPresent(found::add);
        describe(tenant, key, DurableTier.REFUNDS_ROUTE).ifPresent(found::add);
        return found;
    }

    private Optional<Map<String, Object>> describe(String tenant, IdempotencyKey key, String route) {
        ScopeKey scope = DurableTier.scopeKey(tenant, route, key);
        Optional<DurableTier.RecordWithPoint> record = durable.find(scope);
        Optional<Resource> resource = route.equals(DurableTier.CHARGES_ROUTE)
                ? jdbc.queryOne(CHARGE_BY_SCOPE, s -> s.setString(1, scope.hash()),
                        rs -> new Resource("charge", rs.getString(1), rs.getString(2), rs.getString(3), Jdbc.instant(rs, "created_at")))
                : jdbc.queryOne(REFUND_BY_SCOPE, s -> s.setString(1, scope.hash()),
                        rs -> new Resource("refund", rs.getString(1), rs.getString(2), "finished", Jdbc.instant(rs, "created_at")));
        if (record.isEmpty() && resource.isEmpty()) {
            return Optional.empty();
        }
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("object", "idempotency_key");
        json.put("key", key.value());
        json.put("route", "POST " + route);
        IdempotencyRecord r = record.map(DurableTier.RecordWithPoint::record).orElse(null);
        json.put("status", r == null ? "expired" : r.status().name().toLowerCase(Locale.ROOT));
        String point = resource.map(Resource::recoveryPoint)
                .orElseGet(() -> record.map(DurableTier.RecordWithPoint::recoveryPoint).orElse(null));
        json.put("recovery_point", point);
        Instant created = r != null ? r.createdAt() : resource.map(Resource::created).orElse(null);
        json.put("created", created == null ? null : created.toString());
        json.put("expires", r == null ? null : r.expiresAt().toString());
        json.put("lease_expires", r == null || r.leaseExpiresAt() == null ? null : r.leaseExpiresAt().toString());
        json.put("replay_count", durable.replays(scope));
        json.put("fingerprint_algorithm", r == null ? null : r.fingerprint().algorithm());
        json.put("response_status", r == null || r.response() == null ? null : r.response().status());
        json.put("resource", resource.map(res -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("object", res.type());
            m.put("id", res.id());
            m.put("status", res.status());
            return m;
        }).orElse(null));
        return Optional.of(json);
    }
}
