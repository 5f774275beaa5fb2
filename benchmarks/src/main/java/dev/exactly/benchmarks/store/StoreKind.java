package dev.exactly.benchmarks.store;

import java.util.Arrays;
import java.util.stream.Collectors;

/** The stores under test, named as in the JMH {@code store} parameter. */
public enum StoreKind {
    /** {@code InMemoryIdempotencyStore}: no round trip, the engine's own cost. */
    MEMORY("memory", false),
    /**
     * Redis standalone: a {@code redis-server} of the benchmark's own on a free loopback port when one is
     * on the PATH, else the test Redis (127.0.0.1:6379 or its fallback).
     */
    REDIS("redis", true),
    /** A Redis Cluster of three masters started for the run on loopback ports. */
    REDIS_CLUSTER("redis-cluster", true),
    /** PostgreSQL, a fresh schema and a Hikari pool. */
    POSTGRES("postgres", true);

    private final String id;
    private final boolean hasRawBaseline;

    StoreKind(String id, boolean hasRawBaseline) {
        this.id = id;
        this.hasRawBaseline = hasRawBaseline;
    }

    /** The parameter value, e.g. {@code redis-cluster}. */
    public String id() {
        return id;
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
