package dev.exactly.payments.keys;

import dev.exactly.idempotency.Fingerprinter;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.ScopeKey;
import org.jspecify.annotations.Nullable;

/**
 * The service's idempotent operations, named as the hot tier names them: {@code POST} on a route
 * template, by a tenant, with a key. Both tiers derive the same scope key and the same fingerprint from
 * a request, so a record of either tier answers for the other.
 */
public final class IdempotentRoutes {
    /** Creating a charge. */
    public static final String CHARGES = "/v1/charges";
    /** Creating a refund. */
    public static final String REFUNDS = "/v1/refunds";
    /** Capturing an authorized charge. */
    public static final String CAPTURE = "/v1/charges/{id}/capture";
    /** Voiding an authorized charge. */
    public static final String VOID = "/v1/charges/{id}/void";

    private static final String METHOD = "POST";

    private final Fingerprinter fingerprinter = Fingerprinter.ofDefaults();
    private final IdempotencyPolicy policy;

    /** @param policy lease and retention of the durable records */
    public IdempotentRoutes(IdempotencyPolicy policy) {
        this.policy = policy;
    }

    /** The durable request of a body sent to {@code route} by {@code tenant} with {@code key}. */
    public IdempotencyRequest request(
            String route, String tenant, IdempotencyKey key, byte[] body, @Nullable String contentType) {
        return IdempotencyRequest.of(
                new Scope(tenant, METHOD, route, key),
                fingerprinter.fingerprint(METHOD, route, body, contentType),
                policy);
    }

    /**
     * The durable request of a body sent to {@code path}, a path of the route template {@code route}: the
     * template is part of the scope, the path part of the fingerprint (as the hot tier makes them), so one
     * key sent to the capture of two charges is a key reused, never a replay of the other charge's answer.
     */
    public IdempotencyRequest request(
            String route, String path, String tenant, IdempotencyKey key, byte[] body, @Nullable String contentType) {
        return IdempotencyRequest.of(
                new Scope(tenant, METHOD, route, key),
                fingerprinter.fingerprint(METHOD, path, body, contentType),
                policy);
    }

    /** The scope key of {@code route} for {@code tenant} and {@code key}. */
    public static ScopeKey scopeKey(String tenant, String route, IdempotencyKey key) {
        return new Scope(tenant, METHOD, route, key).toScopeKey();
    }
}
