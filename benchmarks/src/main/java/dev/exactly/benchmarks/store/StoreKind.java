package dev.exactly.benchmarks.store;

import java.util.Arrays;
import java.util.stream.Collectors;

/** The stores under test, named as in the JMH {@code store} parameter. */
public enum StoreKind {
    /** {@code InMemoryIdempotencyStore}: no round trip, the engine's own cost. */
    MEMORY("memory", "0 / 0", false),
    /** Redis standalone at 127.0.0.1:6379 (or the test fallback). */
    REDIS("redis", "2 / 1", true),
    /** A Redis Cluster of three masters started for the run on loopback ports. */
    REDIS_CLUSTER("redis-cluster", "2 / 1", true),
    /** PostgreSQL, a fresh schema and a Hikari pool. */
    POSTGRES("postgres", "2 / 1", true);

    private final String id;
    private final String roundTrips;
    private final boolean hasRawBaseline;

    StoreKind(String id, String roundTrips, boolean hasRawBaseline) {
        this.id = id;
        this.roundTrips = roundTrips;
        this.hasRawBaseline = hasRawBaseline;
    }

    /** The parameter value, e.g. {@code redis-cluster}. */
    public String id() {
        return id;
    }

    /**
     * Store round trips of a guarded operation and of a replay: a claim and a completion (two Lua
     * scripts, or two autocommit statements), and a replay is a claim that finds the finished record.
     */
    public String roundTrips() {
        return roundTrips;
    }

    /** Whether a raw server baseline exists (not for memory: there is no server). */
    public boolean hasRawBaseline() {
        return hasRawBaseline;
    }

    public static StoreKind of(String id) {
        return Arrays.stream(values())
                .filter(kind -> kind.id.equals(id))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown store " + id + "; one of "
                        + Arrays.stream(values()).map(StoreKind::id).collect(Collectors.joining(", "))));
    }
}
