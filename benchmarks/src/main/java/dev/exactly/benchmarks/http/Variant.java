package dev.exactly.benchmarks.http;

import dev.exactly.benchmarks.store.StoreKind;
import java.util.Arrays;
import java.util.Optional;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * The endpoints under test, all serving the same trivial handler: unguarded, behind the idempotency
 * filter on one store, or a raw baseline that does by hand the least any guard on that server must do
 * (the physical floor): two raw round trips for a fresh key (claim a placeholder, then store the answer),
 * one raw read for a replay. Each guarded endpoint is compared with its floor: the in-memory store with
 * the unguarded endpoint, a server store with the raw baseline on the same server, client and pool. The
 * Redis store is also compared with the fenced floor ({@code raw-redis-fenced}), whose answer is written by
 * the least compare-and-set script: on a Redis before 8.4 no plain command can fence a completion, and the
 * plain floor's {@code SET XX} would let a stale owner overwrite its successor's record.
 */
public enum Variant {
    UNGUARDED("unguarded", Role.UNGUARDED, null, null),
    MEMORY("memory", Role.GUARDED, StoreKind.MEMORY, UNGUARDED),
    RAW_REDIS("raw-redis", Role.RAW, StoreKind.REDIS, null),
    RAW_REDIS_FENCED("raw-redis-fenced", Role.RAW, StoreKind.REDIS, null),
    REDIS("redis", Role.GUARDED, StoreKind.REDIS, RAW_REDIS),
    RAW_REDIS_CLUSTER("raw-redis-cluster", Role.RAW, StoreKind.REDIS_CLUSTER, null),
    REDIS_CLUSTER("redis-cluster", Role.GUARDED, StoreKind.REDIS_CLUSTER, RAW_REDIS_CLUSTER),
    RAW_POSTGRES("raw-pg", Role.RAW, StoreKind.POSTGRES, null),
    POSTGRES("postgres", Role.GUARDED, StoreKind.POSTGRES, RAW_POSTGRES);

    /** What an endpoint does with a request. */
    enum Role {
        /** Runs the handler for every request. */
        UNGUARDED,
        /** The idempotency filter on a store in front of the handler. */
        GUARDED,
        /** Raw server round trips around the handler, by hand. */
        RAW
    }

    private final String id;
    private final Role role;
    private final @Nullable StoreKind store;
    private final @Nullable Variant floor;

    Variant(String id, Role role, @Nullable StoreKind store, @Nullable Variant floor) {
        this.id = id;
        this.role = role;
        this.store = store;
        this.floor = floor;
    }

    public String id() {
        return id;
    }

    Role role() {
        return role;
    }

    /** The name of this endpoint's row in {@code mix}: a raw baseline names its round trips. */
    public String name(Mix mix) {
        if (role != Role.RAW) {
            return id;
        }
        return id
                + switch (mix) {
                    case FRESH -> "-2";
                    case REPLAYS -> "-1";
                    case MIXED -> "-told";
                };
    }

    /** The store (or, for a raw baseline, the server) behind this endpoint; empty when unguarded. */
    public Optional<StoreKind> store() {
        return Optional.ofNullable(store);
    }

    /** What a guarded endpoint is compared with; empty for the floors themselves. */
    public Optional<Variant> floor() {
        return Optional.ofNullable(floor);
    }

    /**
     * The fenced floor a guarded endpoint is also compared with (the Redis store: its completion must be a
     * script on Redis before 8.4); empty for the others.
     */
    public Optional<Variant> fencedFloor() {
        return this == REDIS ? Optional.of(RAW_REDIS_FENCED) : Optional.empty();
    }

    /** Whether the raw baseline of this endpoint is the fenced one. */
    boolean fenced() {
        return this == RAW_REDIS_FENCED;
    }

    /** Whether a key runs the handler at most once here (guarded and raw), so that a second run is a failure. */
    boolean runsOncePerKey() {
        return role != Role.UNGUARDED;
    }

    /** Whether a replay is answered from the record, marked {@code Idempotent-Replayed: true}. */
    boolean marksReplays() {
        return role != Role.UNGUARDED;
    }

    /** The Tomcat context of this endpoint, e.g. {@code /redis}. */
    String contextPath() {
        return "/" + id;
    }

    /** The path (within the context) requests of {@code mix} go to. */
    String path(Mix mix) {
        if (role != Role.RAW) {
            return "/v1/charges";
        }
        return switch (mix) {
            case FRESH -> "/v1/charges";
            case REPLAYS -> "/v1/replays";
            case MIXED -> "/v1/told";
        };
    }

    /** The variant named {@code id}. */
    public static Variant of(String id) {
        return Arrays.stream(values())
                .filter(v -> v.id.equals(id))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown endpoint " + id + "; one of "
                        + Arrays.stream(values()).map(Variant::id).collect(Collectors.joining(", "))));
    }
}
