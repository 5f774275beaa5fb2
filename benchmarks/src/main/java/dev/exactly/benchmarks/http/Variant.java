package dev.exactly.benchmarks.http;

import dev.exactly.benchmarks.store.StoreKind;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/** The endpoints under test: the same handler, unguarded or guarded by the filter on one store. */
public enum Variant {
    UNGUARDED("unguarded", null),
    MEMORY("memory", StoreKind.MEMORY),
    REDIS("redis", StoreKind.REDIS),
    POSTGRES("postgres", StoreKind.POSTGRES);

    private final String id;
    private final @Nullable StoreKind store;

    Variant(String id, @Nullable StoreKind store) {
        this.id = id;
        this.store = store;
    }

    public String id() {
        return id;
    }

    /** The store guarding this endpoint; empty when unguarded. */
    public Optional<StoreKind> store() {
        return Optional.ofNullable(store);
    }

    public boolean guarded() {
        return store != null;
    }

    /** The Tomcat context this variant is served under, e.g. {@code /redis}. */
    String contextPath() {
        return "/" + id;
    }
}
