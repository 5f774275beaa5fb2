package dev.exactly.idempotency;

/**
 * One guarded call: its scope, its fingerprint and the policy of its route.
 *
 * @param scope       tenant, method, route and key
 * @param key         the hashed scope ({@link Scope#toScopeKey()})
 * @param fingerprint what the request looked like
 * @param policy      lease, retention, in-flight behaviour
 */
public record IdempotencyRequest(Scope scope, ScopeKey key, Fingerprint fingerprint, IdempotencyPolicy policy) {

    public IdempotencyRequest {
        if (!scope.toScopeKey().equals(key)) {
            throw new IllegalArgumentException("key must be the scope's hash");
        }
    }

    public static IdempotencyRequest of(Scope scope, Fingerprint fingerprint, IdempotencyPolicy policy) {
        return new IdempotencyRequest(scope, scope.toScopeKey(), fingerprint, policy);
    }
}
