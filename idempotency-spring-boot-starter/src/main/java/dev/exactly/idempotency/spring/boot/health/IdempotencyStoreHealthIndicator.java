package dev.exactly.idempotency.spring.boot.health;

import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.ScopeKey;
import dev.exactly.idempotency.memory.InMemoryIdempotencyStore;
import dev.exactly.idempotency.spi.IdempotencyStore;
import dev.exactly.idempotency.spring.boot.StoreErrorLogger;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Objects;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.util.ClassUtils;

/**
 * The health of the idempotency store, contributed to Actuator as {@code idempotency}. A guarded request
 * fails closed (503) when its store is down, so the store is part of the application's health.
 *
 * <ul>
 *   <li>every store: a {@code find} of a fixed probe key that no request can produce, through the
 *       store itself (a round trip on its own connection, with its own timeout); DOWN if it fails;</li>
 *   <li>memory: details {@code size}, {@code maxEntries}, {@code whenFull}, {@code evictions} and
 *       {@code refusals}; {@code OUT_OF_SERVICE} while the store refuses new keys because it is full
 *       (of live records, or, evicting, of records in flight), with the reason;</li>
 *   <li>PostgreSQL: also {@code SELECT 1} through the DataSource, and detail {@code listening} (whether
 *       the LISTEN connection that wakes waiting requests is up; it opens with the first waiting
 *       request, so {@code false} alone is not DOWN);</li>
 *   <li>Redis: the probe is a {@code GET} on the store's command connection.</li>
 * </ul>
 * When DOWN, detail {@code error} says why (the store's failure), and {@code hint} how to fix a set-up
 * mistake such as a missing table ({@link StoreErrorLogger#hint}).
 */
public final class IdempotencyStoreHealthIndicator extends AbstractHealthIndicator {
    /** The key the probe reads: the scope of a tenant, route and key that no HTTP request can carry. */
    static final ScopeKey PROBE_KEY =
            new Scope("exactly.health", "PROBE", "/exactly/health", new IdempotencyKey("probe")).toScopeKey();

    private static final String POSTGRES_STORE = "dev.exactly.idempotency.postgres.PostgresIdempotencyStore";

    private final IdempotencyStore store;
    private final @Nullable DataSource dataSource;

    /**
     * @param store      the store to probe
     * @param dataSource the DataSource of a PostgreSQL store, for {@code SELECT 1}; ignored for other stores
     */
    public IdempotencyStoreHealthIndicator(IdempotencyStore store, @Nullable DataSource dataSource) {
        super("idempotency store health check failed");
        this.store = Objects.requireNonNull(store, "store");
        this.dataSource = dataSource;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) throws Exception {
        builder.withDetail("store", store.toString());
        try {
            probe(builder);
        } catch (Exception e) {
            // DOWN, with the failure as detail "error" (added by the caller) and, for a set-up mistake, its fix
            StoreErrorLogger.hint(e).ifPresent(hint -> builder.withDetail("hint", hint));
            throw e;
        }
    }

    private void probe(Health.Builder builder) throws Exception {
        boolean postgres = isPostgres(store);
        if (postgres && dataSource != null) {
            try (Connection connection = dataSource.getConnection();
                    Statement statement = connection.createStatement()) {
                statement.setQueryTimeout(2);
                try (ResultSet rows = statement.executeQuery("SELECT 1")) {
                    rows.next();
                }
            }
        }
        long start = System.nanoTime();
        store.find(PROBE_KEY);
        builder.withDetail("probeMillis", (System.nanoTime() - start) / 1_000_000);
        if (store instanceof InMemoryIdempotencyStore memory) {
            InMemoryIdempotencyStore.Stats stats = memory.stats();
            builder.withDetail("size", stats.size())
                    .withDetail("maxEntries", stats.maxEntries())
                    .withDetail("whenFull", stats.whenFull())
                    .withDetail("evictions", stats.evictions())
                    .withDetail("refusals", stats.refusals());
            if (stats.refusing()) {
                builder.outOfService()
                        .withDetail(
                                "reason",
                                stats.whenFull() == InMemoryIdempotencyStore.WhenFull.REFUSE
                                        ? "full: new keys are refused (503) until records expire"
                                        : "full of requests in flight: new keys are refused (503) until some finish");
                return;
            }
        }
        if (postgres) {
            builder.withDetail("listening", PostgresDetails.listening(store));
        }
        builder.up();
    }

    private static boolean isPostgres(IdempotencyStore store) {
        return ClassUtils.isPresent(POSTGRES_STORE, IdempotencyStoreHealthIndicator.class.getClassLoader())
                && PostgresDetails.is(store);
    }

    /** Touches the PostgreSQL module only when it is on the class path. */
    private static final class PostgresDetails {
        static boolean is(IdempotencyStore store) {
            return store instanceof dev.exactly.idempotency.postgres.PostgresIdempotencyStore;
        }

        static boolean listening(IdempotencyStore store) {
            return ((dev.exactly.idempotency.postgres.PostgresIdempotencyStore) store).isListening();
        }
    }
}
