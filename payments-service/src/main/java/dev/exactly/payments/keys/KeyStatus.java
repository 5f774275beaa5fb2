package dev.exactly.payments.keys;

import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyRecord;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.postgres.AtomicPhases;
import dev.exactly.idempotency.postgres.Checkpoint;
import dev.exactly.idempotency.postgres.PhaseRecord;
import dev.exactly.payments.db.Jdbc;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What the durable tier knows about one of the caller's keys, on each idempotent route: status,
 * checkpoint, created and expiry times, lease, replay count, and the resource it created. The scope
 * includes the caller's tenant, so no tenant can see another's keys. A key whose record expired still
 * shows its charge or refund (that row keeps the fingerprint forever).
 */
public final class KeyStatus {
    private static final String CHARGE_BY_SCOPE = """
            SELECT id, status, recovery_point, created_at FROM payments_charge WHERE scope_key = ?
            """;
    private static final String REFUND_BY_SCOPE = """
            SELECT id, status, recovery_point, created_at FROM payments_refund WHERE scope_key = ?
            """;
    /** A capture's or void's row: the resource is the action ({@code capture} or {@code void}). */
    private static final String ACTION_BY_SCOPE = """
            SELECT id, status, kind, created_at FROM payments_charge_action WHERE scope_key = ?
            """;

    /** Later than any real expiry: PostgreSQL's {@code 'infinity'}, the expiry of a phase in progress. */
    private static final Instant NEVER = Instant.parse("9999-12-31T23:59:59Z");

    private final AtomicPhases phases;
    private final ReplayCounter replays;
    private final Jdbc jdbc;

    public KeyStatus(AtomicPhases phases, ReplayCounter replays, Jdbc jdbc) {
        this.phases = phases;
        this.replays = replays;
        this.jdbc = jdbc;
    }

    private record Row(
            KeyState.Resource resource,
            @Nullable String checkpoint,
            @Nullable Instant created) {}

    /** The key's state on every route where it was used; empty when it was never used. */
    public List<KeyState> describe(String tenant, IdempotencyKey key) {
        List<KeyState> found = new ArrayList<>();
        describe(tenant, key, IdempotentRoutes.CHARGES).ifPresent(found::add);
        describe(tenant, key, IdempotentRoutes.REFUNDS).ifPresent(found::add);
        describe(tenant, key, IdempotentRoutes.CAPTURE).ifPresent(found::add);
        describe(tenant, key, IdempotentRoutes.VOID).ifPresent(found::add);
        return found;
    }

    private Optional<KeyState> describe(String tenant, IdempotencyKey key, String route) {
        ScopeKey scope = IdempotentRoutes.scopeKey(tenant, route, key);
        Optional<PhaseRecord> record = jdbc.inTransaction(c -> phases.find(c, scope));
        Optional<Row> row = switch (route) {
            case IdempotentRoutes.CHARGES ->
                jdbc.queryOne(
                        CHARGE_BY_SCOPE,
                        s -> s.setString(1, scope.hash()),
                        rs -> new Row(
                                new KeyState.Resource("charge", rs.getString(1), rs.getString(2)),
                                rs.getString(3),
                                Jdbc.instant(rs, "created_at")));
            case IdempotentRoutes.REFUNDS ->
                jdbc.queryOne(
                        REFUND_BY_SCOPE,
                        s -> s.setString(1, scope.hash()),
                        rs -> new Row(
                                new KeyState.Resource("refund", rs.getString(1), rs.getString(2)),
                                rs.getString(3),
                                Jdbc.instant(rs, "created_at")));
            // a capture's or void's checkpoint is the record's
            default ->
                jdbc.queryOne(
                        ACTION_BY_SCOPE,
                        s -> s.setString(1, scope.hash()),
                        rs -> new Row(
                                new KeyState.Resource(rs.getString(3), rs.getString(1), rs.getString(2)),
                                null,
                                Jdbc.instant(rs, "created_at")));
        };
        if (record.isEmpty() && row.isEmpty()) {
            return Optional.empty();
        }
        IdempotencyRecord r = record.map(PhaseRecord::record).orElse(null);
        String checkpoint = row.map(Row::checkpoint)
                .orElseGet(() -> record.map(PhaseRecord::checkpoint)
                        .map(Checkpoint::name)
                        .orElse(null));
        Instant created = r != null ? r.createdAt() : row.map(Row::created).orElse(null);
        return Optional.of(new KeyState(
                key.value(),
                route,
                r == null ? "expired" : r.status().name().toLowerCase(Locale.ROOT),
                checkpoint,
                created,
                r == null || r.expiresAt().isAfter(NEVER) ? null : r.expiresAt(),
                r == null ? null : r.leaseExpiresAt(),
                replays.replays(scope),
                r == null ? null : r.fingerprint().algorithm(),
                r == null || r.response() == null ? null : r.response().status(),
                row.map(Row::resource).orElse(null)));
    }
}
