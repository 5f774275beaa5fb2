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
    private static final String METHOD = "POST";

    private final Fingerprinter fingerprinter = Fingerprinter.ofDefaults();
    private final IdempotencyPolicy policy;

    /** @param policy lease and retention of the durable records */
    public IdempotentRoutes(IdempotencyPolicy policy) {
        this.policy = policy;
    }

    /** The durable request of a body sent to {@code route} by {@code tenant} with {@code key}. */
    public IdempotencyRequest request(String route, String tenant, IdempotencyKey key, byte[] body,
            @Nullable String contentType) {
        return IdempotencyRequest.of(new Scope(tenant, METHOD, route, key),
                fingerprinter.fingerprint(METHOD, route, body, contentType), policy);
    }

    /** The scope key of {@code route} for {@code tenant} and {@code key}. */
    public static ScopeKey scopeKey(String tenant, String route, IdempotencyKey key) {
        return new Scope(tenant, METHOD, route, key).toScopeKey();
    }
}
