package dev.exactly.idempotency;

import dev.exactly.idempotency.internal.Hashing;
import java.util.Locale;

/**
 * What a key is unique within: the tenant (from the authenticated principal, never a free client
 * header), the HTTP method, the route template (e.g. {@code /v1/charges}, not the concrete path) and
 * the client's key. Two tenants sending the same key never share a record.
 *
 * @param tenant   the tenant id resolved from the authenticated principal
 * @param method   the HTTP method (or any operation name), case-insensitive
 * @param route    the route template
 * @param key      the client's idempotency key
 */
public record Scope(String tenant, String method, String route, IdempotencyKey key) {

    public Scope {
        if (tenant.isEmpty()) {
            throw new IllegalArgumentException("tenant must not be empty");
        }
        method = method.toUpperCase(Locale.ROOT);
        if (method.isEmpty() || route.isEmpty()) {
            throw new IllegalArgumentException("method and route must not be empty");
        }
    }

    /** The store key: SHA-256 over the length-prefixed fields. The raw key never reaches a store. */
    public ScopeKey toScopeKey() {
        return new ScopeKey(Hashing.sha256Hex("exactly-scope-v1", tenant, method, route, key.value()));
    }

    @Override
    public String toString() {
        return "Scope[tenant=" + tenant + ", " + method + " " + route + ", " + key + "]";
    }
}
